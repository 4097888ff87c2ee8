/**
 * The WMTS tile grids (TileMatrixSets) as Desktop's WMTS grid table edits them: a grid per CRS, its
 * top left corner and the scale of level 0 (QGIS Server's own for EPSG:3857 and EPSG:4326) and its
 * last level; each field's problem said next to it.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type GridField, gridProblems, type GridRow, isFixedGrid, LAST_LEVEL_MAX, newGridRow } from '../api/wmts-grids';

/** A field's problem, next to it and told to screen readers with the field. */
function Problem({ id, problem }: { id: string; problem: string | undefined }): JSX.Element | null {
  if (problem === undefined) return null;
  return (
    <span id={id} class="error-inline">
      {problem}
    </span>
  );
}

function GridInput(props: {
  id: string;
  label: string;
  value: string;
  problem: string | undefined;
  onInput: (value: string) => void;
}): JSX.Element {
  const problemId = `${props.id}-problem`;
  return (
    <div class="grid-field">
      <label>
        {props.label}
        <input
          inputMode="decimal"
          value={props.value}
          aria-invalid={props.problem === undefined ? undefined : true}
          aria-describedby={props.problem === undefined ? undefined : problemId}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      </label>
      <Problem id={problemId} problem={props.problem} />
    </div>
  );
}

/** The scales of the levels, as Desktop's table ends with the last one's. */
function Scales({ row }: { row: GridRow }): JSX.Element {
  const scale = Number(row.scale);
  const last = Number(row.last);
  if (row.scale === '' || Object.keys(gridProblems(row)).length > 0)
    return <p class="muted">Levels 0 to {row.last || '…'}.</p>;
  return (
    <p class="muted">
      Levels 0 to {last}: 1:{scale} down to 1:{scale / 2 ** last}.
    </p>
  );
}

function GridCard(props: { row: GridRow; onChange: (row: GridRow) => void; onRemove: () => void }): JSX.Element {
  const { row } = props;
  const problems = gridProblems(row);
  const id = `wmts-grid-${row.crs.replace(':', '-')}`;
  const field = (name: GridField, label: string): JSX.Element => (
    <GridInput
      id={`${id}-${name}`}
      label={label}
      value={row[name]}
      problem={problems[name]}
      onInput={(value) => props.onChange({ ...row, [name]: value })}
    />
  );
  return (
    <li>
      <fieldset class="wmts-grid">
        <legend>Grid {row.crs}</legend>
        <div class="fields">
          {isFixedGrid(row.crs) ? (
            <p class="muted">
              Top left corner and scale: QGIS Server’s own
              {row.scale !== '' && ` (${row.left}, ${row.top}; 1:${row.scale} at level 0)`}.
            </p>
          ) : (
            <>
              {field('top', `Top (${row.crs} units)`)}
              {field('left', `Left (${row.crs} units)`)}
              {field('scale', 'Scale denominator of level 0')}
            </>
          )}
          {field('last', `Last level (0 to ${LAST_LEVEL_MAX})`)}
        </div>
        <Scales row={row} />
        <button type="button" onClick={props.onRemove} aria-label={`Remove grid ${row.crs}`}>
          Remove
        </button>
      </fieldset>
    </li>
  );
}

/** Adds a grid for a CRS typed; the text's problem is said next to it. */
function AddGrid(props: { rows: GridRow[]; onAdd: (row: GridRow) => void }): JSX.Element {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const add = (): void => {
    const made = newGridRow(text, props.rows);
    if (typeof made === 'string') return setProblem(made);
    setProblem(undefined);
    setText('');
    props.onAdd(made);
  };
  return (
    <div class="fields add-grid">
      <div class="grid-field">
        <label>
          CRS of a grid to add (EPSG code)
          <input
            value={text}
            placeholder="EPSG:2154"
            aria-invalid={problem === undefined ? undefined : true}
            aria-describedby={problem === undefined ? undefined : 'wmts-grid-add-problem'}
            onInput={(event) => setText(event.currentTarget.value)}
            onKeyDown={(event) => {
              // Enter adds the grid rather than save the whole form.
              if (event.key !== 'Enter') return;
              event.preventDefault();
              add();
            }}
          />
        </label>
        <Problem id="wmts-grid-add-problem" problem={problem} />
      </div>
      <div class="actions">
        <button type="button" onClick={add}>
          Add grid
        </button>
      </div>
    </div>
  );
}

/** What the grids leave QGIS Server: its own, none, or those listed. */
function gridsState(rows: GridRow[] | null): string {
  if (rows === null) return ' None defined: QGIS Server’s own, one per WMS CRS.';
  if (rows.length === 0)
    return ' The project defines no grid: QGIS Server publishes no TileMatrixSet, so no tile can be asked for.';
  return '';
}

/** The grids; null rows: the project defines none, and QGIS Server publishes its own. */
export function WmtsGrids(props: { rows: GridRow[] | null; onChange: (rows: GridRow[] | null) => void }): JSX.Element {
  const { onChange } = props;
  const rows = props.rows ?? [];
  return (
    <fieldset class="card">
      <legend>WMTS tile grids</legend>
      <p class="muted">
        The TileMatrixSets QGIS Server publishes, one per CRS; each level halves the scale of the one before.
        {gridsState(props.rows)}
      </p>
      <ul class="wmts-grids">
        {rows.map((row, index) => (
          <GridCard
            key={row.crs}
            row={row}
            onChange={(changed) => onChange(rows.map((each, at) => (at === index ? changed : each)))}
            onRemove={() => onChange(rows.filter((_, at) => at !== index))}
          />
        ))}
      </ul>
      <AddGrid rows={rows} onAdd={(row) => onChange([...rows, row])} />
      {props.rows?.length === 0 && (
        <div class="actions">
          <button type="button" onClick={() => onChange(null)}>
            Use QGIS Server’s own grids
          </button>
        </div>
      )}
    </fieldset>
  );
}
