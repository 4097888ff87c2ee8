/** A project's MapProxy tile cache: its state, its reset, and its seeding and truncation jobs. */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { projectRef, schemaQuery } from '../api/projects';
import { JobList } from '../components/jobs';
import { ErrorMessage, Loading } from '../components/messages';
import { NumberField } from '../components/number-field';
import { Page } from '../components/page';
import { ProjectTabs } from '../components/project-tabs';
import { useAction, useApi } from '../components/use-api';
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
      {server.data?.cache === 'mapproxy' && <CacheState project={ref.project} schema={ref.schema} />}
    </Page>
  );
}

function CacheState(props: { project: string; schema: string | undefined }): JSX.Element {
  const ref = { project: props.project, schema: props.schema };
  const options = { path: { project: props.project }, query: schemaQuery(ref) };
  const status = useApi(
    (signal) => api.get('/api/projects/{project}/cache', { ...options, signal }),
    [props.project, props.schema],
  );
  const [message, setMessage] = useState<string | undefined>(undefined);
  const reset = useAction(async () => {
    setMessage(undefined);
    await api.post('/api/projects/{project}/cache/reset', options);
    setMessage(`The cached tiles of ${props.project} were cleared and its configuration rebuilt.`);
    status.reload();
  });
  const state = status.data;
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
        <p>Resetting clears every cached tile and rebuilds the configuration from the project's layers.</p>
        <button type="button" class="danger" disabled={reset.busy} onClick={() => void reset.run()}>
          {reset.busy ? 'Resetting…' : 'Reset the cache'}
        </button>
        <ErrorMessage error={reset.error} />
        {message && (
          <p role="status" class="muted">
            {message}
          </p>
        )}
      </section>
      <section class="card" aria-labelledby="jobs-title">
        <h2 id="jobs-title">Seeding and truncation</h2>
        <SeedForm project={props.project} schema={props.schema} />
        <JobList project={ref} kinds={['seed', 'truncate']} />
      </section>
    </div>
  );
}

/** Starts a seeding or truncation job of all the project's layers on a range of zoom levels. */
function SeedForm(props: { project: string; schema: string | undefined }): JSX.Element {
  const ref = { project: props.project, schema: props.schema };
  const [minZoom, setMinZoom] = useState('0');
  const [maxZoom, setMaxZoom] = useState('4');
  const [refresh, setRefresh] = useState(false);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const levels = { min_zoom: Number(minZoom), max_zoom: Number(maxZoom) };
  const options = { path: { project: props.project }, query: schemaQuery(ref) };
  const start = useAction(async (kind: 'seed' | 'truncate') => {
    setMessage(undefined);
    const job =
      kind === 'seed'
        ? await api.post('/api/projects/{project}/cache/seed', { ...options, body: { ...levels, refresh } })
        : await api.post('/api/projects/{project}/cache/truncate', { ...options, body: levels });
    setMessage(`The ${kind} job of levels ${minZoom} to ${maxZoom} is ${job.state}; its progress shows below.`);
  });
  return (
    <form
      class="form"
      aria-label="Seed or truncate the cache"
      onSubmit={(event) => {
        event.preventDefault();
        void start.run('seed');
      }}
    >
      <div class="fields">
        <NumberField label="From zoom level" min={0} max={19} value={minZoom} onInput={setMinZoom} />
        <NumberField label="To zoom level" min={0} max={19} value={maxZoom} onInput={setMaxZoom} />
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
