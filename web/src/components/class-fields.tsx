/**
 * The classes of a categorized or graduated style: the field they class by, picked from the
 * layer's fields as its source defines them, each with its type (`GET .../layers/{layer}/fields`,
 * whether or not WFS publishes the layer; only numeric ones for ranges), and a row per category
 * or range. "Classify" fills them from every feature of the layer
 * (`GET .../layers/{layer}/fields/{field}/values`): a category per distinct value, or ranges of
 * equal width from the field's minimum to its maximum.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { categoryColour, classifyCategories, type Draft, equalIntervals, rampColour } from '../style-draft';
import { ClassTable } from './class-table';
import { ColourInput } from './colour-input';
import { ErrorMessage } from './messages';
import { useAction, useApi } from './use-api';

/** Categories "Classify" makes at most: a field with more distinct values is graded or typed. */
const MAX_CATEGORIES = 1000;

interface Field {
  name: string;
  type: string;
}

const NUMERIC = new Set(['integer', 'real']);

function useFields(project: ProjectRef, layer: string) {
  return useApi(
    async (signal) =>
      await api.get('/api/projects/{project}/layers/{layer}/fields', {
        path: { project: project.project, layer },
        query: schemaQuery(project),
        signal,
      }),
    [project.project, project.schema, layer],
  );
}

interface Props {
  project: ProjectRef;
  layer: string;
  draft: Draft;
  onChange: (draft: Draft) => void;
}

/** The fields a style of the draft's renderer can class by: numbers for ranges, any for categories. */
function classable(fields: Field[], renderer: Draft['renderer']): Field[] {
  return renderer === 'graduated' ? fields.filter((field) => NUMERIC.has(field.type)) : fields;
}

/**
 * A select of the fields the style can class by, the draft's own first when it is not one of them;
 * while they are listed, the draft's alone. A text input when they cannot be listed.
 */
function FieldPicker(props: Props & { fields: Field[] | undefined; failed: boolean }): JSX.Element {
  const { draft, fields } = props;
  const set = (field: string): void => props.onChange({ ...draft, field });
  if (props.failed) {
    return (
      <label>
        Field
        <input required value={draft.field} onInput={(event) => set(event.currentTarget.value)} />
      </label>
    );
  }
  const offered = classable(fields ?? [], draft.renderer);
  const listed = draft.field === '' || offered.some((field) => field.name === draft.field);
  const ownType = fields && (fields.find((field) => field.name === draft.field)?.type ?? 'not in the layer');
  return (
    <label>
      Field
      <select required value={draft.field} onChange={(event) => set(event.currentTarget.value)}>
        <option value="" disabled>
          {fields ? 'Choose a field' : 'Listing the fields…'}
        </option>
        {!listed && <option value={draft.field}>{ownType ? `${draft.field} (${ownType})` : draft.field}</option>}
        {offered.map((field) => (
          <option key={field.name} value={field.name}>
            {field.name} ({field.type})
          </option>
        ))}
      </select>
    </label>
  );
}

function CategoryTable(props: Props): JSX.Element {
  const { draft } = props;
  return (
    <ClassTable
      entries={draft.categories}
      onChange={(categories) => props.onChange({ ...draft, categories })}
      noun="category"
      firstHeading="Value"
      colourName={(category) => category.label || category.value}
      firstCell={(category, update, index) => (
        <input
          aria-label={`Value of category ${index + 1}`}
          required
          value={category.value}
          onInput={(event) => update({ value: event.currentTarget.value })}
        />
      )}
    />
  );
}

function RangeTable(props: Props): JSX.Element {
  const { draft } = props;
  return (
    <ClassTable
      entries={draft.ranges}
      onChange={(ranges) => props.onChange({ ...draft, ranges })}
      noun="range"
      firstHeading="From – to"
      colourName={(range, index) => range.label || `range ${index + 1}`}
      firstCell={(range, update, index) => (
        <>
          <input
            type="number"
            step="any"
            required
            aria-label={`Lower bound of range ${index + 1}`}
            value={range.lower}
            onInput={(event) => update({ lower: event.currentTarget.value })}
          />
          {' – '}
          <input
            type="number"
            step="any"
            required
            aria-label={`Upper bound of range ${index + 1}`}
            value={range.upper}
            onInput={(event) => update({ upper: event.currentTarget.value })}
          />
        </>
      )}
    />
  );
}

function OtherValues(props: Props): JSX.Element {
  const { draft } = props;
  return (
    <div class="fields">
      <label class="check">
        <input
          type="checkbox"
          checked={draft.other !== undefined}
          onChange={(event) =>
            props.onChange({
              ...draft,
              other: event.currentTarget.checked ? { label: 'other values', colour: '#cccccc' } : undefined,
            })
          }
        />
        Draw the other values
      </label>
      {draft.other && (
        <label>
          Colour of the other values
          <ColourInput
            name="Colour of the other values"
            of="the other values"
            colour={draft.other.colour}
            onChange={(colour) => props.onChange({ ...draft, other: { label: draft.other?.label ?? '', colour } })}
          />
        </label>
      )}
    </div>
  );
}

/** The field, the classify control and the classes of a categorized or graduated style. */
export function ClassFields(props: Props): JSX.Element {
  const { draft } = props;
  const fields = useFields(props.project, props.layer);
  const [count, setCount] = useState('5');
  const categorized = draft.renderer === 'categorized';
  const classify = useAction(async () => {
    if (draft.field === '') throw new Error('Choose the field to classify by first.');
    const field = await api.get('/api/projects/{project}/layers/{layer}/fields/{field}/values', {
      path: { project: props.project.project, layer: props.layer, field: draft.field },
      query: { ...schemaQuery(props.project), limit: String(MAX_CATEGORIES) },
    });
    if (categorized) {
      if (field.truncated) {
        throw new Error(
          `The field “${draft.field}” holds more than ${MAX_CATEGORIES} values: grade it, or type the categories.`,
        );
      }
      return props.onChange({ ...draft, categories: classifyCategories(field.values) });
    }
    if (field.min === undefined || field.max === undefined) {
      throw new Error(`The field “${draft.field}” holds no numbers to grade.`);
    }
    props.onChange({ ...draft, ranges: equalIntervals(field.min, field.max, Math.max(1, Number(count))) });
  });
  const add = (): void => {
    if (categorized) {
      const colour = categoryColour(draft.categories.length);
      props.onChange({ ...draft, categories: [...draft.categories, { value: '', label: '', colour }] });
      return;
    }
    const last = draft.ranges[draft.ranges.length - 1];
    const range = { lower: last?.upper ?? '0', upper: '', label: '', colour: rampColour(1) };
    props.onChange({ ...draft, ranges: [...draft.ranges, range] });
  };
  return (
    <fieldset>
      <legend>{categorized ? 'Categories' : 'Ranges'}</legend>
      <div class="fields">
        <FieldPicker {...props} fields={fields.data} failed={fields.error !== undefined && !fields.data} />
        {!categorized && (
          <label>
            Number of ranges
            <input
              type="number"
              min="1"
              max="20"
              value={count}
              onInput={(event) => setCount(event.currentTarget.value)}
            />
          </label>
        )}
      </div>
      {fields.error && (
        <p class="muted">The layer's fields cannot be listed: {fields.error.message} Type the field instead.</p>
      )}
      <div class="actions">
        <button type="button" disabled={classify.busy} onClick={() => void classify.run()}>
          Classify
        </button>
        <button type="button" onClick={add}>
          Add a {categorized ? 'category' : 'range'}
        </button>
      </div>
      <ErrorMessage error={classify.error} />
      {categorized ? <CategoryTable {...props} /> : <RangeTable {...props} />}
      {categorized && <OtherValues {...props} />}
    </fieldset>
  );
}
