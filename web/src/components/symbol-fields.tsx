/**
 * A symbol's fields generated from QGIS's symbology catalogue (`GET /api/symbology/...`): a
 * property whose default lists its choices becomes a select, a colour a colour picker, a number a
 * number field, a yes/no setting a checkbox.
 */
import type { JSX, TargetedEvent } from 'preact';

import { ColourInput } from './colour-input';

export interface SymbolField {
  name: string;
  kind: 'choice' | 'colour' | 'number' | 'yes-no' | 'text';
  initial: string;
  choices: string[];
}

/**
 * The yes/no settings of QGIS's simple symbol layers: QGIS writes them 0 or 1, which the catalogue
 * cannot tell from a number, so they are named here.
 */
const YES_NO = new Set([
  'align_dash_pattern',
  'draw_inside_polygon',
  'tweak_dash_pattern_on_corners',
  'use_custom_dash',
]);

/** `solid (no, solid, dash)` → a choice; `255,0,0,255` → a colour; `0.26` → a number; a yes/no → a checkbox. */
export function fieldOf(name: string, description: string): SymbolField {
  if (YES_NO.has(name)) return { name, kind: 'yes-no', initial: description === '1' ? '1' : '0', choices: [] };
  const choice = /^(.*?) \((.+)\)$/.exec(description);
  if (choice) return { name, kind: 'choice', initial: choice[1] ?? '', choices: (choice[2] ?? '').split(', ') };
  if (/colou?r$/.test(name) && /^\d+,\d+,\d+(,\d+)?$/.test(description)) {
    return { name, kind: 'colour', initial: description, choices: [] };
  }
  if (/^-?\d+(\.\d+)?$/.test(description)) return { name, kind: 'number', initial: description, choices: [] };
  return { name, kind: 'text', initial: description, choices: [] };
}

/** The catalogue's fields of a symbol, without the map-unit scales the form does not offer. */
export function symbolFields(catalogue: Record<string, string>): SymbolField[] {
  return Object.entries(catalogue)
    .filter(([key]) => !key.endsWith('_map_unit_scale'))
    .map(([key, description]) => fieldOf(key, description));
}

/** The properties that differ from QGIS's defaults, as the API takes them. */
export function changedProperties(
  fields: SymbolField[],
  values: Record<string, string>,
): Record<string, string | number> {
  const properties: Record<string, string | number> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (value === undefined || value === field.initial) continue;
    properties[field.name] = field.kind === 'number' || field.kind === 'yes-no' ? Number(value) : value;
  }
  return properties;
}

function label(name: string): string {
  return name.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());
}

function FieldInput(props: { field: SymbolField; value: string; set: (value: string) => void }): JSX.Element {
  const { field, value, set } = props;
  if (field.kind === 'choice') {
    return (
      <label>
        {label(field.name)}
        <select value={value} onChange={(event) => set(event.currentTarget.value)}>
          {field.choices.map((choice) => (
            <option key={choice} value={choice}>
              {choice}
            </option>
          ))}
        </select>
      </label>
    );
  }
  if (field.kind === 'yes-no') {
    return (
      <label class="check">
        <input
          type="checkbox"
          checked={value === '1' || value === 'true'}
          onChange={(event) => set(event.currentTarget.checked ? '1' : '0')}
        />
        {label(field.name)}
      </label>
    );
  }
  if (field.kind === 'colour') {
    return (
      <label>
        {label(field.name)}
        <ColourInput name={label(field.name)} of={field.name.replace(/_/g, ' ')} colour={value} onChange={set} />
      </label>
    );
  }
  const input = (event: TargetedEvent<HTMLInputElement>): void => set(event.currentTarget.value);
  return (
    <label>
      {label(field.name)}
      {field.kind === 'number' ? (
        <input type="number" step="any" value={value} onInput={input} />
      ) : (
        <input type="text" value={value} onInput={input} />
      )}
    </label>
  );
}

/** The symbol's fields; `without` is left out (the class colour of a categorized or graduated style). */
export function SymbolFields(props: {
  fields: SymbolField[];
  values: Record<string, string>;
  without?: string | undefined;
  onChange: (values: Record<string, string>) => void;
}): JSX.Element {
  return (
    <>
      {props.fields
        .filter((field) => field.name !== props.without)
        .map((field) => (
          <FieldInput
            key={field.name}
            field={field}
            value={props.values[field.name] ?? field.initial}
            set={(next) => props.onChange({ ...props.values, [field.name]: next })}
          />
        ))}
    </>
  );
}
