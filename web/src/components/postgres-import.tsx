/**
 * Imports a vector file into a table of a PostgreSQL service (`POST /api/datasources/postgres/import`)
 * and follows its job to its end with a progress bar and a cancel button.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { type Answer, api, type Body } from '../api/client';
import { ErrorMessage } from './messages';
import { useAction, useApi, useInterval } from './use-api';

const REFRESH_MS = 500;

type ImportBody = Body<'/api/datasources/postgres/import'>;
type Job = Answer<'/api/jobs/{id}'>;

function ended(job: Job | undefined): boolean {
  return job !== undefined && job.state !== 'queued' && job.state !== 'running';
}

function JobProgress(props: { id: string; onEnd: () => void }): JSX.Element {
  const job = useApi((signal) => api.get('/api/jobs/{id}', { path: { id: props.id }, signal }), [props.id]);
  const over = ended(job.data);
  useInterval(job.reload, REFRESH_MS, !over);
  const cancel = useAction(async () => {
    await api.delete('/api/jobs/{id}', { path: { id: props.id } });
    job.reload();
  });
  const data = job.data;
  useEffect(() => {
    if (over) props.onEnd();
  }, [over]);
  const rows = data?.result?.['rows'];
  return (
    <div role="status" aria-label="Import progress">
      <ErrorMessage error={job.error ?? cancel.error} />
      {data && (
        <p>
          <progress max={1} value={data.progress} aria-label="Progress of the import" />{' '}
          {Math.round(data.progress * 100)}% {data.state}
          {typeof rows === 'number' && `: ${rows.toLocaleString('en')} rows in the table`}
          {data.error && <span class="error-inline">: {data.error}</span>}{' '}
          {!over && (
            <button type="button" disabled={cancel.busy} onClick={() => void cancel.run()}>
              Cancel the import
            </button>
          )}
        </p>
      )}
    </div>
  );
}

export function PostgresImportForm(props: { service: string; onImported: () => void }): JSX.Element {
  const [form, setForm] = useState<Omit<ImportBody, 'service'>>({ schema: 'public', table: '', source: '' });
  const [job, setJob] = useState<string | undefined>(undefined);
  const start = useAction(async () => {
    const started = await api.post('/api/datasources/postgres/import', { body: { ...form, service: props.service } });
    setJob(started.id);
  });
  const field = (key: 'source' | 'schema' | 'table', label: string, hint: string): JSX.Element => (
    <label>
      {label}
      <input
        required
        value={form[key]}
        title={hint}
        onInput={(event) => setForm({ ...form, [key]: event.currentTarget.value })}
      />
    </label>
  );
  return (
    <form
      class="form"
      aria-label={`Import into service ${props.service}`}
      onSubmit={(event) => {
        event.preventDefault();
        void start.run();
      }}
    >
      <h3>Import a file into {props.service}</h3>
      <div class="fields">
        {field('source', 'Source file', 'A path in the upload root, or a datasource in the data folders')}
        {field('schema', 'Schema', 'An existing schema')}
        {field('table', 'Table', 'Lowercase letters, digits and _')}
        <label>
          If the table exists
          <select
            value={form.mode ?? 'create'}
            onChange={(event) => setForm({ ...form, mode: event.currentTarget.value as ImportBody['mode'] })}
          >
            <option value="create">refuse</option>
            <option value="overwrite">replace it</option>
            <option value="append">add the rows</option>
          </select>
        </label>
      </div>
      <button type="submit" disabled={start.busy}>
        Import
      </button>
      <ErrorMessage error={start.error} />
      {job && <JobProgress key={job} id={job} onEnd={props.onImported} />}
    </form>
  );
}
