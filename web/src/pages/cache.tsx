/** A project's MapProxy tile cache: its state, its reset, and its seeding and truncation jobs. */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { api } from '../api/client';
import { type LayerInfo } from '../api/layers';
import { projectRef, schemaQuery } from '../api/projects';
import { type OfferedBasemap } from '../components/basemap';
import { useBasemap } from '../components/basemap-picker';
import { ConfirmDialog } from '../components/confirm-dialog';
import { JobList, useJobEnd } from '../components/jobs';
import { ErrorMessage, Loading } from '../components/messages';
import { NumberField } from '../components/number-field';
import { Page } from '../components/page';
import { type Area, type MapLayer, ProjectMap } from '../components/project-map';
import { ProjectTabs } from '../components/project-tabs';
import { TableHead } from '../components/table-head';
import { useMayWrite } from '../components/use-access';
import { useAction, useApi } from '../components/use-api';
import { useProjectLayers } from '../components/use-project-layers';
import { inBytes } from '../format';
import type { PageProps } from '../routes';

export default function CachePage({ params, query }: PageProps): JSX.Element {
  const ref = projectRef(params, query);
  const server = useApi((signal) => api.get('/api/server', { signal }), []);
  return (
    <Page title={`${ref.project}: tile cache`}>
      <ProjectTabs project={ref} current="/cache" />
      <ErrorMessage error={server.error} />
      {!server.data && server.loading && <Loading what="the server's facts" />}
      {server.data?.cache === 'disabled' && (
        <p class="card muted">
          The tile cache is not enabled on this Steward: set STEWARD_MAPPROXY_PROJECTS_DIR to have MapProxy cache the
          project's maps.
        </p>
      )}
      {server.data?.cache === 'mapproxy' && (
        <CacheState project={ref.project} schema={ref.schema} basemaps={server.data.basemaps} />
      )}
    </Page>
  );
}

function CacheState(props: {
  project: string;
  schema: string | undefined;
  basemaps: readonly OfferedBasemap[];
}): JSX.Element {
  const ref = { project: props.project, schema: props.schema };
  const options = { path: { project: props.project }, query: schemaQuery(ref) };
  const status = useApi(
    (signal) => api.get('/api/projects/{project}/cache', { ...options, signal }),
    [props.project, props.schema],
  );
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [asking, setAsking] = useState(false);
  const reset = async (): Promise<void> => {
    setMessage(undefined);
    await api.post('/api/projects/{project}/cache/reset', options);
    setMessage(`The cached tiles of ${props.project} were cleared and its configuration rebuilt.`);
    status.reload();
  };
  const state = status.data;
  const mayWrite = useMayWrite(ref);
  return (
    <div class="grid-2">
      <section class="card" aria-labelledby="cache-title">
        <h2 id="cache-title">State</h2>
        <ErrorMessage error={status.error} />
        {!state && status.loading && <Loading what="the cache's state" />}
        {state && (
          <dl class="facts">
            <dt>Configuration</dt>
            <dd>
              {state.valid ? <span class="badge ok">valid</span> : <span class="badge broken">not valid</span>}
              {state.reason && <span class="error-inline"> {state.reason}</span>}
            </dd>
            <dt>Tiles kept in</dt>
            <dd>{state.storage === 's3' ? 'object storage (S3)' : 'the filesystem'}</dd>
          </dl>
        )}
        {mayWrite && (
          <>
            <p>Resetting clears every cached tile and rebuilds the configuration from the project's layers.</p>
            <button type="button" class="danger" onClick={() => setAsking(true)}>
              Reset the cache
            </button>
          </>
        )}
        {asking && (
          <ConfirmDialog
            title={`Reset the tile cache of ${props.project}?`}
            confirm="Clear every tile"
            cancel="Keep the tiles"
            onConfirm={reset}
            onClose={() => setAsking(false)}
          >
            <p>
              Every cached tile of {props.project} is deleted; maps are drawn again by QGIS Server until the cache fills
              anew. Seeding afterwards can take a long time.
            </p>
          </ConfirmDialog>
        )}
        {message && (
          <p role="status" class="muted">
            {message}
          </p>
        )}
      </section>
      <CacheUsage project={props.project} schema={props.schema} />
      {/* The whole width: the map and the jobs' table would break words in a column. */}
      <section class="card wide" aria-labelledby="jobs-title">
        <h2 id="jobs-title">Seeding and truncation</h2>
        {mayWrite && <SeedForm project={props.project} schema={props.schema} basemaps={props.basemaps} />}
        <JobList project={ref} kinds={['seed', 'truncate']} mayCancel={mayWrite} />
      </section>
    </div>
  );
}

/** The tiles cached for each layer and the room they take, measured when asked. */
function CacheUsage(props: { project: string; schema: string | undefined }): JSX.Element {
  const ref = { project: props.project, schema: props.schema };
  const usage = useApi(
    (signal) =>
      api.get('/api/projects/{project}/cache/usage', {
        path: { project: props.project },
        query: schemaQuery(ref),
        signal,
      }),
    [props.project, props.schema],
  );
  const data = usage.data;
  return (
    <section class="card" aria-labelledby="usage-title">
      <h2 id="usage-title">Disk use</h2>
      <ErrorMessage error={usage.error} />
      {!data && usage.loading && <Loading what="the tiles cached" />}
      {data && (
        <table class="table">
          <TableHead
            caption={`Tiles cached for each layer of ${props.project}, in ${data.storage === 's3' ? 'S3' : 'files'}`}
            columns={['Layer', { label: 'Tiles', numeric: true }, { label: 'Size', numeric: true }]}
          />
          <tbody>
            {data.layers.map((layer) => (
              <tr key={layer.name}>
                <td>{layer.name}</td>
                <td class="number">{layer.tiles.toLocaleString('en')}</td>
                <td class="number">{inBytes(layer.bytes)}</td>
              </tr>
            ))}
            <tr>
              <th scope="row">All layers</th>
              <td class="number" data-testid="usage-tiles">
                {data.total.tiles.toLocaleString('en')}
              </td>
              <td class="number" data-testid="usage-bytes">
                {inBytes(data.total.bytes)}
              </td>
            </tr>
          </tbody>
        </table>
      )}
      <button type="button" onClick={usage.reload} disabled={usage.loading}>
        {usage.loading ? 'Measuring…' : 'Measure again'}
      </button>
    </section>
  );
}

/** The zoom level a field holds, or a sentence saying what is wrong with it. */
function zoomLevel(label: string, text: string): number {
  if (text.trim() === '') throw new Error(`“${label}” is empty: enter a zoom level from 0 to 19.`);
  const level = Number(text);
  if (!Number.isInteger(level) || level < 0 || level > 19)
    throw new Error(`“${label}” must be a whole number from 0 to 19, not ${text}.`);
  return level;
}

/** The range of zoom levels the form names, checked as the API would (and empty fields refused). */
function zoomLevels(from: string, to: string): { min_zoom: number; max_zoom: number } {
  const min_zoom = zoomLevel('From zoom level', from);
  const max_zoom = zoomLevel('To zoom level', to);
  if (min_zoom > max_zoom)
    throw new Error(`“From zoom level” (${min_zoom}) must not be above “To zoom level” (${max_zoom}).`);
  return { min_zoom, max_zoom };
}

const SIDES = [
  ['West', -180, 180],
  ['South', -90, 90],
  ['East', -180, 180],
  ['North', -90, 90],
] as const;
type AreaText = [string, string, string, string];
const NO_AREA: AreaText = ['', '', '', ''];

/** The area the form names, in degrees (EPSG:4326), or undefined for the layers' whole extents. */
function areaOf(area: AreaText): { extent: Area; extent_crs: string } | undefined {
  if (area.every((side) => side.trim() === '')) return undefined;
  const [west, south, east, north] = SIDES.map(([label, least, most], index) => {
    const text = area[index] ?? '';
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value < least || value > most)
      throw new Error(`“${label}” must be a number of degrees from ${least} to ${most}, or every side left empty.`);
    return value;
  }) as Area;
  if (west >= east) throw new Error(`“West” (${west}) must be less than “East” (${east}).`);
  if (south >= north) throw new Error(`“South” (${south}) must be less than “North” (${north}).`);
  return { extent: [west, south, east, north], extent_crs: 'EPSG:4326' };
}

/** The area the form names, to outline on the map: undefined while it is empty or not yet valid. */
function outlined(area: AreaText): Area | undefined {
  try {
    return areaOf(area)?.extent;
  } catch {
    return undefined;
  }
}

/** The project's layers as the map draws them: every valid one, visible, in the project's drawing order. */
function mapLayers(drawn: LayerInfo[]): MapLayer[] {
  return drawn.flatMap(({ name, valid, bbox, bbox_wgs84: bboxWgs84, crs }) =>
    valid ? [{ name, visible: true, bbox: bbox ?? '', bboxWgs84, crs }] : [],
  );
}

/** Starts a seeding or truncation job of all the project's layers on a range of zoom levels, in an area or all over. */
function SeedForm(props: {
  project: string;
  schema: string | undefined;
  basemaps: readonly OfferedBasemap[];
}): JSX.Element {
  const ref = { project: props.project, schema: props.schema };
  const [minZoom, setMinZoom] = useState('0');
  const [maxZoom, setMaxZoom] = useState('4');
  const [refresh, setRefresh] = useState(false);
  const [area, setArea] = useState<AreaText>(NO_AREA);
  const { basemap, picker: basemapPicker } = useBasemap(props.basemaps);
  const [mapError, setMapError] = useState<Error | undefined>(undefined);
  const layers = useProjectLayers(ref);
  const [message, setMessage] = useState<string | undefined>(undefined);
  // The seed job started here, with the words that name it: once it succeeds, its area is cleared.
  const [seeding, setSeeding] = useState<{ id: string; named: string } | undefined>(undefined);
  const ended = useJobEnd(seeding?.id);
  useEffect(() => {
    if (!ended || !seeding) return;
    if (ended === 'succeeded') setArea(NO_AREA);
    setMessage(
      `${seeding.named} ${ended}${ended === 'succeeded' ? ': its area is cleared from the map and the form' : ''}.`,
    );
    setSeeding(undefined);
  }, [ended]);
  const options = { path: { project: props.project }, query: schemaQuery(ref) };
  const start = useAction(async (kind: 'seed' | 'truncate') => {
    setMessage(undefined);
    const levels = zoomLevels(minZoom, maxZoom);
    const where = areaOf(area);
    const body = { ...levels, ...where };
    const job =
      kind === 'seed'
        ? await api.post('/api/projects/{project}/cache/seed', { ...options, body: { ...body, refresh } })
        : await api.post('/api/projects/{project}/cache/truncate', { ...options, body });
    const within = where ? ` within ${where.extent.join(', ')}` : '';
    const named = `The ${kind} job of levels ${levels.min_zoom} to ${levels.max_zoom}${within}`;
    setMessage(`${named} is ${job.state}; its progress shows below.`);
    setSeeding(kind === 'seed' && where ? { id: job.id, named } : undefined);
  });
  return (
    <form
      class="form"
      aria-label="Seed or truncate the cache"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void start.run('seed');
      }}
    >
      <div class="fields">
        <NumberField label="From zoom level" min={0} max={19} value={minZoom} onInput={setMinZoom} />
        <NumberField label="To zoom level" min={0} max={19} value={maxZoom} onInput={setMaxZoom} />
      </div>
      <fieldset class="fields">
        <legend>Area, in degrees (WGS 84); empty for each layer’s whole extent</legend>
        {SIDES.map(([label], index) => (
          <label key={label}>
            {label}
            <input
              type="text"
              inputMode="decimal"
              value={area[index]}
              onInput={(event) => {
                const value = event.currentTarget.value;
                setArea((sides) => sides.map((side, at) => (at === index ? value : side)) as AreaText);
              }}
            />
          </label>
        ))}
      </fieldset>
      <div class="area-map">
        <p class="muted">Or hold Ctrl (⌘ on a Mac) and drag on the map to draw the area.</p>
        {basemapPicker}
        <ProjectMap
          project={ref}
          layers={layers.ordered ? mapLayers(layers.drawn) : []}
          onError={setMapError}
          onArea={(drawn) => setArea(drawn.map((side) => side.toFixed(5)) as AreaText)}
          area={outlined(area)}
          basemap={basemap}
        />
        {area.some((side) => side !== '') && (
          <button type="button" onClick={() => setArea(NO_AREA)}>
            Clear the area
          </button>
        )}
        <ErrorMessage error={mapError ?? layers.layers.error} />
      </div>
      <label class="check">
        <input type="checkbox" checked={refresh} onChange={(event) => setRefresh(event.currentTarget.checked)} />
        Draw again the tiles already cached
      </label>
      <div class="actions">
        <button type="submit" class="primary" disabled={start.busy}>
          Seed
        </button>
        <button type="button" disabled={start.busy} onClick={() => void start.run('truncate')}>
          Truncate
        </button>
      </div>
      <ErrorMessage error={start.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
    </form>
  );
}
