/**
 * The fields of a raster style: the band and its minimum and maximum (a band picked brings its
 * statistics as the limits); for singleband pseudocolor the interpolation and a row per colour stop ("Spread stops" lays five evenly from
 * the minimum to the maximum), for singleband gray the stretch.
 */
import type { JSX } from 'preact';

import {
  type BandStatistics,
  type Draft,
  evenStops,
  type Interpolation,
  rampColour,
  withStatistics,
} from '../style-draft';
import { ClassTable } from './class-table';
import { NumberField } from './number-field';

const INTERPOLATIONS: Array<[Interpolation, string]> = [
  ['INTERPOLATED', 'Linear (interpolated)'],
  ['DISCRETE', 'Discrete (up to each stop)'],
  ['EXACT', 'Exact (only the stop values)'],
];

interface Props {
  draft: Draft;
  onChange: (draft: Draft) => void;
}

interface FieldsProps extends Props {
  /** The raster's band statistics, by band number. */
  statistics: BandStatistics;
}

function StopTable(props: Props): JSX.Element {
  const { draft } = props;
  return (
    <ClassTable
      entries={draft.stops}
      onChange={(stops) => props.onChange({ ...draft, stops })}
      noun="stop"
      firstHeading="Value"
      colourName={(_, index) => `stop ${index + 1}`}
      firstCell={(stop, update, index) => (
        <input
          type="number"
          step="any"
          required
          aria-label={`Value of stop ${index + 1}`}
          value={stop.value}
          onInput={(event) => update({ value: event.currentTarget.value })}
        />
      )}
    />
  );
}

export function RasterFields(props: FieldsProps): JSX.Element {
  const { draft } = props;
  const set = (change: Partial<Draft>): void => props.onChange({ ...draft, ...change });
  const pseudocolor = draft.renderer === 'singlebandpseudocolor';
  const addStop = (): void => {
    const last = draft.stops[draft.stops.length - 1];
    set({ stops: [...draft.stops, { value: last ? '' : draft.min, label: '', colour: rampColour(1) }] });
  };
  return (
    <fieldset>
      <legend>{pseudocolor ? 'Colour ramp' : 'Grey stretch'}</legend>
      <div class="fields">
        <label>
          Band
          <input
            type="number"
            min="1"
            step="1"
            required
            value={draft.band}
            onInput={(e) =>
              props.onChange(
                withStatistics({ ...draft, band: e.currentTarget.value, min: '', max: '' }, props.statistics),
              )
            }
          />
        </label>
        <NumberField label="Minimum" step="any" value={draft.min} onInput={(min) => set({ min })} />
        <NumberField label="Maximum" step="any" value={draft.max} onInput={(max) => set({ max })} />
        {pseudocolor ? (
          <label>
            Interpolation
            <select
              value={draft.interpolation}
              onChange={(e) => set({ interpolation: e.currentTarget.value as Interpolation })}
            >
              {INTERPOLATIONS.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <label class="check">
            <input
              type="checkbox"
              checked={draft.stretch}
              onChange={(e) => set({ stretch: e.currentTarget.checked })}
            />
            Stretch from the minimum (black) to the maximum (white)
          </label>
        )}
      </div>
      {pseudocolor && (
        <>
          <div class="actions">
            <button type="button" onClick={() => set({ stops: evenStops(Number(draft.min), Number(draft.max), 5) })}>
              Spread stops
            </button>
            <button type="button" onClick={addStop}>
              Add a stop
            </button>
          </div>
          <StopTable {...props} />
        </>
      )}
    </fieldset>
  );
}
