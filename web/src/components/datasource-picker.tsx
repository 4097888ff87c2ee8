/**
 * Picks a datasource for a new layer: the folders of STEWARD_DATA_ROOTS and, when it is set up,
 * object storage (`/vsis3/`) through `GET /api/datasources/files`, or the tables of a PostgreSQL service through
 * `GET /api/datasources/postgres`. Each entry is a layer GDAL opened, with what it reported.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { DataUpload } from './data-upload';
import { ErrorMessage, Loading } from './messages';
import { PostgresImportForm } from './postgres-import';
import { useApi } from './use-api';

export type Candidate = Answer<'/api/datasources/postgres'>['layers'][number];

function describe(layer: Candidate): string {
  if (layer.type === 'vector') {
    const count = layer.features === undefined ? '' : `, ${layer.features} features`;
    return `vector, ${layer.geometry ?? 'no geometry'}${count}${layer.crs ? `, ${layer.crs}` : ''}`;
  }
  const size = layer.width && layer.height ? `, ${layer.width}×${layer.height}` : '';
  return `raster, ${layer.bands ?? '?'} band(s) ${layer.data_type ?? ''}${size}${layer.crs ? `, ${layer.crs}` : ''}`;
}

function CandidateButton(props: {
  layer: Candidate;
  selected: boolean;
  onPick: (layer: Candidate) => void;
}): JSX.Element {
  return (
    <li>
      <button
        type="button"
        class="link"
        aria-pressed={props.selected}
        onClick={() => props.onPick(props.layer)}
        aria-label={`Use ${props.layer.name} (${describe(props.layer)})`}
      >
        {props.layer.name}
      </button>{' '}
      <span class="muted">{describe(props.layer)}</span>
    </li>
  );
}

function Folder(props: {
  path: string;
  roots: string[];
  onOpen: (path: string) => void;
  picked: string | undefined;
  onPick: (layer: Candidate) => void;
}): JSX.Element {
  const listing = useApi(
    (signal) => api.get('/api/datasources/files', { query: { path: props.path }, signal }),
    [props.path],
  );
  const data = listing.data;
  return (
    <div>
      <ErrorMessage error={listing.error} />
      {!data && listing.loading && <Loading what={props.path} />}
      {data && (
        <ul class="picker" aria-label={`Contents of ${data.path}`}>
          {data.parent && (
            <li>
              <button type="button" class="link" onClick={() => props.onOpen(data.parent ?? '')}>
                ↑ Up to {data.parent}
              </button>
            </li>
          )}
          {!data.parent && !props.roots.includes(data.path) && props.roots.length > 0 && (
            <li>
              <button type="button" class="link" onClick={() => props.onOpen('')}>
                ↑ Back to the data folders
              </button>
            </li>
          )}
          {data.folders.map((folder) => (
            <li key={folder.path}>
              <button type="button" class="link" onClick={() => props.onOpen(folder.path)}>
                📁 {folder.name}/
              </button>
            </li>
          ))}
          {data.datasets.map((dataset) => (
            <li key={dataset.path}>
              {dataset.name}
              <ul>
                {dataset.layers.map((layer) => (
                  <CandidateButton
                    key={layer.datasource}
                    layer={layer}
                    selected={props.picked === layer.datasource}
                    onPick={props.onPick}
                  />
                ))}
              </ul>
            </li>
          ))}
          {data.folders.length === 0 && data.datasets.length === 0 && (
            <li class="muted">Nothing GDAL can open in this folder.</li>
          )}
          {data.truncated && <li class="muted">Only the first files are listed with their layers.</li>}
        </ul>
      )}
    </div>
  );
}

function Tables(props: { picked: string | undefined; onPick: (layer: Candidate) => void }): JSX.Element {
  const [service, setService] = useState('');
  const [asked, setAsked] = useState<string | undefined>(undefined);
  const tables = useApi(
    async (signal) => (asked ? api.get('/api/datasources/postgres', { query: { service: asked }, signal }) : undefined),
    [asked],
  );
  return (
    <div>
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          setAsked(service);
        }}
      >
        <label for="pg-service">Connection service</label>
        <input id="pg-service" value={service} required onInput={(event) => setService(event.currentTarget.value)} />
        <button type="submit">List tables</button>
      </form>
      <ErrorMessage error={tables.error} />
      {tables.data && (
        <ul class="picker" aria-label={`Tables of service ${tables.data.service}`}>
          {tables.data.layers.map((layer) => (
            <CandidateButton
              key={layer.datasource}
              layer={layer}
              selected={props.picked === layer.datasource}
              onPick={props.onPick}
            />
          ))}
          {tables.data.layers.length === 0 && <li class="muted">No table with a geometry column.</li>}
        </ul>
      )}
      {tables.data && <PostgresImportForm service={tables.data.service} onImported={tables.reload} />}
    </div>
  );
}

const KINDS = [
  ['files', 'Data folders'],
  ['s3', 'Object storage (/vsis3/)'],
  ['postgres', 'PostGIS tables'],
] as const;

export function DatasourcePicker(props: {
  roots: string[];
  /** Whether object storage is set up (GET /api/server): it is offered only then. */
  objectStorage: boolean;
  /** The project whose folder of the upload root a data file goes to. */
  project: string;
  picked: string | undefined;
  onPick: (layer: Candidate) => void;
}): JSX.Element {
  const [kind, setKind] = useState<'files' | 's3' | 'postgres'>('files');
  const [path, setPath] = useState<string>(props.roots[0] ?? '/vsis3/');
  const [s3Path, setS3Path] = useState('/vsis3/');
  return (
    <fieldset class="picker-box">
      <legend>Datasource</legend>
      <div role="radiogroup" aria-label="Where the data is" class="inline-form">
        {KINDS.filter(([value]) => value !== 's3' || props.objectStorage).map(([value, label]) => (
          <label class="check" key={value}>
            <input type="radio" name="source-kind" checked={kind === value} onChange={() => setKind(value)} />
            {label}
          </label>
        ))}
      </div>
      {kind === 'files' &&
        (props.roots.length === 0 ? (
          <p class="muted">
            No data folders are configured: set STEWARD_DATA_ROOTS to let the console browse them, or type a datasource
            below.
          </p>
        ) : (
          <>
            {props.roots.length > 1 && (
              <div class="inline-form">
                <label for="data-root">Data folder</label>
                <select id="data-root" value={path} onChange={(event) => setPath(event.currentTarget.value)}>
                  {props.roots.map((root) => (
                    <option key={root} value={root}>
                      {root}
                    </option>
                  ))}
                </select>
              </div>
            )}
            <DataUpload project={props.project} onUploaded={setPath} />
            <Folder
              path={path || props.roots[0] || ''}
              roots={props.roots}
              onOpen={(next) => setPath(next || props.roots[0] || '')}
              picked={props.picked}
              onPick={props.onPick}
            />
          </>
        ))}
      {kind === 's3' && (
        <Folder
          path={s3Path}
          roots={['/vsis3/']}
          onOpen={(next) => setS3Path(next || '/vsis3/')}
          picked={props.picked}
          onPick={props.onPick}
        />
      )}
      {kind === 'postgres' && <Tables picked={props.picked} onPick={props.onPick} />}
    </fieldset>
  );
}
