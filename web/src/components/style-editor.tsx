/**
 * A style editor generated from QGIS's symbology catalogue (`GET /api/symbology/...`): a property
 * whose default lists its choices becomes a select, a colour a colour picker, a number a number
 * field. Only the properties changed from QGIS's defaults are sent. "Preview" saves the style and
 * draws the layer with it on the map (WMS STYLES) without making it the layer's current style.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage, Loading } from './messages';
import { useAction, useApi } from './use-api';

type Geometry = 'point' | 'line' | 'polygon';
const ENDPOINTS = {
  point: ['/api/symbology/vector/point/single_symbol/marker/properties', 'marker'],
  line: ['/api/symbology/vector/line/single_symbol/line/properties', 'line'],
  polygon: ['/api/symbology/vector/polygon/single_symbol/fill/properties', 'fill'],
} as const;

export function geometryClass(wkbType: string | undefined): Geometry | undefined {
  if (!wkbType) return undefined;
  if (/polygon|surface/i.test(wkbType)) return 'polygon';
  if (/line|curve/i.test(wkbType)) return 'line';
  if (/point/i.test(wkbType)) return 'point';
  return undefined;
}

interface Field {
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
export function fieldOf(name: string, description: string): Field {
  if (YES_NO.has(name)) return { name, kind: 'yes-no', initial: description === '1' ? '1' : '0', choices: [] };
  const choice = /^(.*?) \((.+)\)$/.exec(description);
  if (choice) return { name, kind: 'choice', initial: choice[1] ?? '', choices: (choice[2] ?? '').split(', ') };
  if (/colou?r$/.test(name) && /^\d+,\d+,\d+(,\d+)?$/.test(description)) {
    return { name, kind: 'colour', initial: description, choices: [] };
  }
  if (/^-?\d+(\.\d+)?$/.test(description)) return { name, kind: 'number', initial: description, choices: [] };
  return { name, kind: 'text', initial: description, choices: [] };
}

function toHex(rgb: string): string {
  const [r, g, b] = rgb.split(',').map(Number);
  return `#${[r, g, b].map((value) => (value ?? 0).toString(16).padStart(2, '0')).join('')}`;
}

function label(name: string): string {
  return name.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());
}

interface EditorProps {
  project: ProjectRef;
  layer: string;
  geometry: Geometry;
  /** The layer's current style, which the editor starts from when the JSON codec describes it. */
  current: string | undefined;
  onPreview: (style: string | undefined) => void;
  onChanged: () => void;
}

/** Where the editor starts: the current style's name, opacity and properties, or QGIS's defaults. */
interface Start {
  name: string;
  opacity: string;
  values: Record<string, string>;
  /** Why the editor starts from QGIS's defaults rather than the current style. */
  note?: string;
}

interface JsonStyle {
  rendering?: { opacity?: number };
  symbology?: { type?: string; symbol?: string; properties?: Record<string, unknown> };
}

async function startOf(props: EditorProps, signal: AbortSignal): Promise<Start> {
  const fresh = { name: `${props.layer}-style`, opacity: '1', values: {} };
  const current = props.current;
  if (!current || current === 'default') return fresh;
  const style: unknown = await api.get('/api/projects/{project}/styles/{style}', {
    path: { project: props.project.project, style: current },
    query: schemaQuery(props.project),
    signal,
  });
  const json = typeof style === 'object' && style !== null ? (style as JsonStyle) : undefined;
  const symbology = json?.symbology;
  if (!json || symbology?.type !== 'single_symbol' || symbology.symbol !== ENDPOINTS[props.geometry][1])
    return {
      ...fresh,
      note: `The current style “${current}” was not made with this editor (a QML from QGIS Desktop, or another renderer): the editor starts from QGIS's defaults under a new name.`,
    };
  const values = Object.fromEntries(
    Object.entries(symbology.properties ?? {}).map(([key, value]) => [key, String(value)]),
  );
  return { name: current, opacity: String(json.rendering?.opacity ?? 1), values };
}

/** The editor, once the layer's current style is read. */
export function StyleEditor(props: EditorProps): JSX.Element {
  const start = useApi((signal) => startOf(props, signal), [props.layer, props.current]);
  if (!start.data) return start.error ? <ErrorMessage error={start.error} /> : <Loading what="the current style" />;
  return <StyleForm {...props} start={start.data} />;
}

/** Refuses, in words, a style name the API would refuse as part of a file name. */
function checkStyleName(name: string): void {
  if (name.trim() === '') throw new Error('The style needs a name.');
  if (/[/\\]/.test(name)) throw new Error(`The style name “${name}” may not contain a slash.`);
  if (name.startsWith('.')) throw new Error(`The style name “${name}” may not start with a dot.`);
  if (name === 'default') throw new Error('“default” is the built-in style: choose another name.');
}

function StyleForm(props: EditorProps & { start: Start }): JSX.Element {
  const [endpoint, symbol] = ENDPOINTS[props.geometry];
  const catalogue = useApi((signal) => api.get(endpoint, { signal }), [endpoint]);
  const [values, setValues] = useState<Record<string, string>>(props.start.values);
  const [name, setName] = useState(props.start.name);
  const [opacity, setOpacity] = useState(props.start.opacity);
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const fields = Object.entries((catalogue.data ?? {}) as Record<string, string>)
    .filter(([key]) => !key.endsWith('_map_unit_scale'))
    .map(([key, description]) => fieldOf(key, description));
  const query = schemaQuery(props.project);
  const path = { project: props.project.project };

  const body = (): unknown => {
    const properties: Record<string, string | number> = {};
    for (const field of fields) {
      const value = values[field.name];
      if (value === undefined || value === field.initial) continue;
      properties[field.name] = field.kind === 'number' || field.kind === 'yes-no' ? Number(value) : value;
    }
    return {
      type: 'vector',
      name,
      rendering: { opacity: Number(opacity) },
      symbology: { type: 'single_symbol', symbol, properties },
    };
  };

  /** Saves the style under its name, replacing an earlier version in one request (PUT). */
  const save = async (): Promise<void> => {
    checkStyleName(name);
    await api.put('/api/projects/{project}/styles/{style}', { path: { ...path, style: name }, query, body: body() });
    await api.post('/api/projects/{project}/layers/{layer}/style', {
      path: { ...path, layer: props.layer },
      query,
      body: { name, current: false },
    });
    setSaved(name);
  };
  const preview = useAction(async () => {
    await save();
    props.onPreview(name);
    setMessage(`The map shows ${props.layer} drawn with “${name}”; it is not the layer's current style yet.`);
    props.onChanged();
  });
  const makeCurrent = useAction(async () => {
    if (saved !== name) await save();
    await api.post('/api/projects/{project}/layers/{layer}/style', {
      path: { ...path, layer: props.layer },
      query,
      body: { name, current: true },
    });
    props.onPreview(undefined);
    setMessage(`“${name}” is now the current style of ${props.layer}.`);
    props.onChanged();
  });
  const makeDefault = useAction(async () => {
    if (saved !== name) await save();
    await api.post('/api/projects/{project}/styles/default', {
      path,
      query,
      body: { style: name, geometry: props.geometry },
    });
    setMessage(`“${name}” is now the default style of new ${props.geometry} layers.`);
  });

  if (!catalogue.data)
    return catalogue.error ? <ErrorMessage error={catalogue.error} /> : <Loading what="the catalogue" />;
  const busy = preview.busy || makeCurrent.busy || makeDefault.busy;
  return (
    <form
      class="form"
      aria-label={`Style editor for ${props.layer}`}
      onSubmit={(event) => {
        event.preventDefault();
        void preview.run();
      }}
    >
      {props.start.note && <p class="muted">{props.start.note}</p>}
      <div class="fields">
        <label>
          Style name
          <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          Opacity
          <input
            type="number"
            min="0"
            max="1"
            step="0.05"
            value={opacity}
            onInput={(event) => setOpacity(event.currentTarget.value)}
          />
        </label>
        {fields.map((field) => {
          const value = values[field.name] ?? field.initial;
          const set = (next: string): void => setValues({ ...values, [field.name]: next });
          if (field.kind === 'choice') {
            return (
              <label key={field.name}>
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
              <label key={field.name} class="check">
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
              <label key={field.name}>
                {label(field.name)}
                <input
                  type="color"
                  value={value.startsWith('#') ? value : toHex(value)}
                  onInput={(event) => set(event.currentTarget.value)}
                />
              </label>
            );
          }
          return (
            <label key={field.name}>
              {label(field.name)}
              {field.kind === 'number' ? (
                <input type="number" step="any" value={value} onInput={(event) => set(event.currentTarget.value)} />
              ) : (
                <input type="text" value={value} onInput={(event) => set(event.currentTarget.value)} />
              )}
            </label>
          );
        })}
      </div>
      <ErrorMessage error={preview.error ?? makeCurrent.error ?? makeDefault.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          Preview on the map
        </button>
        <button type="button" class="primary" disabled={busy} onClick={() => void makeCurrent.run()}>
          Make current style
        </button>
        <button type="button" disabled={busy} onClick={() => void makeDefault.run()}>
          Default for {props.geometry} layers
        </button>
      </div>
    </form>
  );
}
