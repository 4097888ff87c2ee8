/**
 * A layer's style editor. It starts from the layer's current style as the API describes it in JSON
 * (`GET .../styles/{style}?as=json`: a style QGIS Desktop wrote too, when the JSON styles hold
 * it), and offers the renderers of the layer's kind, each with its own form: the symbol's fields
 * from QGIS's symbology catalogue, the classes of a categorized or graduated style, the band and
 * colours of a raster. While the form changes, the map draws the layer with the style as it
 * stands, unsaved, once the typing pauses (`POST .../layers/{layer}/style-preview`, which writes
 * nothing); "Make current style" saves it into the layer's style manager as its current style, in
 * one request (`PUT .../styles/{style}?layer=&current=true`).
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { api, ApiError } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import {
  type BandStatistics,
  CLASS_COLOUR,
  type Draft,
  draftOf,
  freshDraft,
  type Renderer,
  styleBody,
  withStatistics,
} from '../style-draft';
import { ClassFields } from './class-fields';
import { ErrorMessage, Loading } from './messages';
import { RasterFields } from './raster-fields';
import { changedProperties, SymbolFields, symbolFields } from './symbol-fields';
import { useAction, useApi } from './use-api';

type Geometry = 'point' | 'line' | 'polygon';
/** What the editor styles: a vector layer's geometry, or a raster. */
export type StyledKind = Geometry | 'raster';

/** How long the form rests before the map draws the style as it stands. */
const DRAFT_PAUSE_MS = 400;

const ENDPOINTS = {
  point: ['/api/symbology/vector/point/single_symbol/marker/properties', 'marker'],
  line: ['/api/symbology/vector/line/single_symbol/line/properties', 'line'],
  polygon: ['/api/symbology/vector/polygon/single_symbol/fill/properties', 'fill'],
} as const;

const RENDERERS: Record<'vector' | 'raster', Array<[Renderer, string]>> = {
  vector: [
    ['single_symbol', 'Single symbol'],
    ['categorized', 'Categorized (a colour per value)'],
    ['graduated', 'Graduated (a colour per range)'],
  ],
  raster: [
    ['singlebandpseudocolor', 'Singleband pseudocolor'],
    ['singlebandgray', 'Singleband gray'],
  ],
};

export function geometryClass(wkbType: string | undefined): Geometry | undefined {
  if (!wkbType) return undefined;
  if (/polygon|surface/i.test(wkbType)) return 'polygon';
  if (/line|curve/i.test(wkbType)) return 'line';
  if (/point/i.test(wkbType)) return 'point';
  return undefined;
}

interface EditorProps {
  project: ProjectRef;
  layer: string;
  kind: StyledKind;
  /** The layer's current style, which the editor starts from when the API describes it in JSON. */
  current: string | undefined;
  /** The style as the form holds it, a JSON body, once it differs from where it started; undefined otherwise. */
  onDraft: (body: string | undefined) => void;
  onChanged: () => void;
}

/** Where the editor starts: the current style, or QGIS's defaults under a new name with the reason. */
interface Start {
  draft: Draft;
  note?: string;
  /** A raster's band statistics, which its limits start from. */
  statistics?: BandStatistics;
}

/**
 * A raster's smallest and largest valid value of each band, exact (the histogram route, one bin,
 * which the processing page's chart uses too).
 */
async function bandStatistics(props: EditorProps, signal: AbortSignal): Promise<BandStatistics> {
  return api.post('/api/processing/raster/histogram/{project}/{layer}', {
    path: { project: props.project.project, layer: props.layer },
    query: schemaQuery(props.project),
    body: { count: 1 },
    signal,
  });
}

/** The start with a raster's limits taken from its band's statistics where the style gives none. */
async function startOf(props: EditorProps, signal: AbortSignal): Promise<Start> {
  const start = await styleStart(props, signal);
  if (props.kind !== 'raster') return start;
  try {
    const statistics = await bandStatistics(props, signal);
    return { ...start, draft: withStatistics(start.draft, statistics), statistics };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const unread = `The band statistics could not be read (${error.message}): type the minimum and maximum.`;
    return { ...start, note: [start.note, unread].filter(Boolean).join(' ') };
  }
}

async function styleStart(props: EditorProps, signal: AbortSignal): Promise<Start> {
  const raster = props.kind === 'raster';
  const fresh = freshDraft(`${props.layer}-style`, raster);
  const current = props.current;
  if (!current || current === 'default') return { draft: fresh };
  const cannot = (why: string): Start => ({
    draft: fresh,
    note: `The current style “${current}” cannot be edited here (${why}): the editor starts from QGIS's defaults under a new name.`,
  });
  try {
    const style: unknown = await api.get('/api/projects/{project}/styles/{style}', {
      path: { project: props.project.project, style: current },
      query: { ...schemaQuery(props.project), as: 'json' },
      signal,
    });
    const draft = draftOf(style as Record<string, unknown>, raster);
    return draft ? { draft } : cannot('a renderer this editor does not offer');
  } catch (error) {
    // 422: the API says why the JSON styles cannot hold it (a layer's own style is not a project style).
    if (error instanceof ApiError && (error.status === 422 || error.status === 404)) return cannot(error.message);
    throw error;
  }
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

function useSymbolFields(kind: StyledKind) {
  const endpoint = kind === 'raster' ? undefined : ENDPOINTS[kind][0];
  const catalogue = useApi(
    async (signal) => (endpoint ? ((await api.get(endpoint, { signal })) as Record<string, string>) : {}),
    [endpoint],
  );
  return { ...catalogue, fields: symbolFields(catalogue.data ?? {}) };
}

function StyleForm(props: EditorProps & { start: Start }): JSX.Element {
  const symbol = props.kind === 'raster' ? 'raster' : ENDPOINTS[props.kind][1];
  const catalogue = useSymbolFields(props.kind);
  const [draft, setDraft] = useState<Draft>(props.start.draft);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const query = schemaQuery(props.project);
  const path = { project: props.project.project };
  const name = draft.name;

  /** Saves the style under its name into the layer's style manager, in one request (PUT). */
  const save = async (current: boolean): Promise<void> => {
    checkStyleName(name);
    await api.put('/api/projects/{project}/styles/{style}', {
      path: { ...path, style: name },
      query: { ...query, layer: props.layer, current: current ? 'true' : 'false' },
      body: body(),
    });
  };
  const body = (): ReturnType<typeof styleBody> =>
    styleBody(draft, symbol, changedProperties(catalogue.fields, draft.values));
  const draftJson = catalogue.data ? JSON.stringify(body()) : undefined;
  // The style the form started from (once the catalogue is read): the map draws it already.
  const startJson = useRef<string | undefined>(undefined);
  startJson.current ??= draftJson;
  useEffect(() => {
    const drawn = draftJson === startJson.current ? undefined : draftJson;
    const timer = setTimeout(() => props.onDraft(drawn), DRAFT_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [draftJson]);
  useEffect(() => () => props.onDraft(undefined), []);
  const makeCurrent = useAction(async () => {
    await save(true);
    // The form is now the current style, which the map draws as it draws any (WMS), not as a draft.
    startJson.current = draftJson;
    props.onDraft(undefined);
    setMessage(`“${name}” is now the current style of ${props.layer}.`);
    props.onChanged();
  });
  const makeDefault = useAction(async () => {
    await save(false);
    await api.post('/api/projects/{project}/styles/default', {
      path,
      query,
      body: { style: name, geometry: props.kind },
    });
    setMessage(`“${name}” is now the default style of new ${props.kind} layers.`);
  });

  if (!catalogue.data)
    return catalogue.error ? <ErrorMessage error={catalogue.error} /> : <Loading what="the catalogue" />;
  const busy = makeCurrent.busy || makeDefault.busy;
  const vector = symbol !== 'raster';
  const classed = draft.renderer === 'categorized' || draft.renderer === 'graduated';
  return (
    <form
      class="form"
      aria-label={`Style editor for ${props.layer}`}
      // Enter in a field writes nothing: the map already draws the form as it stands.
      onSubmit={(event) => event.preventDefault()}
    >
      {props.start.note && <p class="muted">{props.start.note}</p>}
      <div class="fields">
        <label>
          Style name
          <input required value={name} onInput={(event) => setDraft({ ...draft, name: event.currentTarget.value })} />
        </label>
        <label>
          Renderer
          <select
            value={draft.renderer}
            onChange={(event) => setDraft({ ...draft, renderer: event.currentTarget.value as Renderer })}
          >
            {RENDERERS[vector ? 'vector' : 'raster'].map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </label>
        {vector && (
          <label>
            Opacity
            <input
              type="number"
              min="0"
              max="1"
              step="0.05"
              value={draft.opacity}
              onInput={(event) => setDraft({ ...draft, opacity: event.currentTarget.value })}
            />
          </label>
        )}
      </div>
      {vector && classed && (
        <ClassFields project={props.project} layer={props.layer} draft={draft} onChange={setDraft} />
      )}
      {vector && (
        <fieldset>
          <legend>{classed ? 'Symbol of every class' : 'Symbol'}</legend>
          <div class="fields">
            <SymbolFields
              fields={catalogue.fields}
              values={draft.values}
              without={classed ? CLASS_COLOUR[symbol] : undefined}
              onChange={(values) => setDraft({ ...draft, values })}
            />
          </div>
        </fieldset>
      )}
      {!vector && <RasterFields draft={draft} statistics={props.start.statistics ?? {}} onChange={setDraft} />}
      <ErrorMessage error={makeCurrent.error ?? makeDefault.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => void makeCurrent.run()}>
          Make current style
        </button>
        {vector && (
          <button type="button" disabled={busy} onClick={() => void makeDefault.run()}>
            Default for {props.kind} layers
          </button>
        )}
      </div>
    </form>
  );
}
