/**
 * The table of a style's classes (categories, ranges or colour stops): a row each, with a first
 * cell of the class's own (its value or bounds), then its label, its colour and a Remove button.
 */
import type { ComponentChildren, JSX } from 'preact';

import { ColourInput } from './colour-input';

interface StyleClass {
  label: string;
  colour: string;
}

interface Props<Class extends StyleClass> {
  entries: Class[];
  onChange: (entries: Class[]) => void;
  /** What a class is called in the controls' names: "category", "range", "stop". */
  noun: string;
  firstHeading: string;
  firstCell: (entry: Class, update: (change: Partial<Class>) => void, index: number) => ComponentChildren;
  colourName: (entry: Class, index: number) => string;
}

export function ClassTable<Class extends StyleClass>(props: Props<Class>): JSX.Element {
  const { entries, noun } = props;
  const update = (index: number, change: Partial<Class> | Partial<StyleClass>): void =>
    props.onChange(entries.map((entry, i) => (i === index ? { ...entry, ...change } : entry)));
  return (
    <table class="table">
      <thead>
        <tr>
          <th scope="col">{props.firstHeading}</th>
          <th scope="col">Label</th>
          <th scope="col">Colour</th>
          <th scope="col">
            <span class="visually-hidden">Remove</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry, index) => (
          <tr key={index}>
            <td>{props.firstCell(entry, (change) => update(index, change), index)}</td>
            <td>
              <input
                aria-label={`Label of ${noun} ${index + 1}`}
                value={entry.label}
                onInput={(event) => update(index, { label: event.currentTarget.value })}
              />
            </td>
            <td>
              <ColourInput
                name={`Colour of ${props.colourName(entry, index)}`}
                of={props.colourName(entry, index)}
                colour={entry.colour}
                onChange={(colour) => update(index, { colour })}
              />
            </td>
            <td>
              <button type="button" onClick={() => props.onChange(entries.filter((_, i) => i !== index))}>
                Remove
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
