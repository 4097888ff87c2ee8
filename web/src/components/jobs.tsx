/** Long work of a project (seeding, truncation, processing) and its progress, from `GET /api/jobs`. */
import type { JSX } from 'preact';

import { type Answer, api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from './messages';
import { TableHead } from './table-head';
import { useAction, useApi, useInterval } from './use-api';

const REFRESH_MS = 1000;

type Job = Answer<'/api/jobs'>[number];

const count = (value: number, unit: string): string => `${value.toLocaleString('en')} ${unit}${value === 1 ? '' : 's'}`;

/**
 * How far a job got, in its own units: a seeding counts MapProxy's tasks (100 points a task) and
 * reports the tiles it seeded once done; a truncation counts levels of layers; other jobs their
 * percentage.
 */
export function progressInWords(job: Job): string {
  const percent = `${Math.round(job.progress * 100)}%`;
  const tiles = job.result?.['tiles'];
  if (job.kind === 'seed' && typeof tiles === 'number') return `${percent}: ${count(tiles, 'tile')} seeded`;
  if (job.kind === 'seed' && job.total >= 100) {
    const tasks = Math.round(job.total / 100);
    return `${percent}: task ${Math.min(Math.floor(job.done / 100) + 1, tasks)} of ${tasks}`;
  }
  if (job.kind === 'truncate' && job.total > 0)
    return `${percent}: ${job.done} of ${count(job.total, 'level')} cleared`;
  return percent;
}

export function JobList(props: {
  project: ProjectRef;
  kinds: string[];
  /** Whether the jobs may be cancelled: they are the project's, cancelling needs its write. */
  mayCancel: boolean;
}): JSX.Element {
  const { project, kinds } = props;
  const jobs = useApi(
    (signal) => api.get('/api/jobs', { query: { project: project.project, ...schemaQuery(project) }, signal }),
    [project.project, project.schema],
  );
  useInterval(jobs.reload, REFRESH_MS);
  const cancel = useAction(async (id: string) => {
    await api.delete('/api/jobs/{id}', { path: { id } });
    jobs.reload();
  });
  const shown = (jobs.data ?? []).filter((job) => kinds.includes(job.kind));
  return (
    <>
      <ErrorMessage error={jobs.error ?? cancel.error} />
      {jobs.data && shown.length === 0 && <p class="muted">No {kinds.join(' or ')} job yet.</p>}
      {shown.length > 0 && (
        <table class="table">
          <TableHead
            caption={`Jobs of ${project.project}`}
            columns={['Kind', 'State', 'Progress', 'Created']}
            actions
          />
          <tbody>
            {shown.map((job) => (
              <tr key={job.id}>
                <td>{job.kind}</td>
                <td>
                  {job.state}
                  {job.error && <span class="error-inline">: {job.error}</span>}
                </td>
                <td>
                  <progress max={1} value={job.progress} aria-label={`Progress of ${job.kind} job ${job.id}`} />{' '}
                  {progressInWords(job)}
                </td>
                <td>{new Date(job.created).toLocaleString()}</td>
                <td>
                  {props.mayCancel && (job.state === 'queued' || job.state === 'running') && (
                    <button
                      type="button"
                      disabled={cancel.busy}
                      onClick={() => void cancel.run(job.id)}
                      aria-label={`Cancel the ${job.kind} job`}
                    >
                      Cancel
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

type Ended = 'succeeded' | 'failed' | 'cancelled';

/** How job `id` ended, once it has; it is asked again every second until then. */
export function useJobEnd(id: string | undefined): Ended | undefined {
  const job = useApi(
    (signal) => (id === undefined ? Promise.resolve(undefined) : api.get('/api/jobs/{id}', { path: { id }, signal })),
    [id],
  );
  const state = job.data?.id === id ? job.data?.state : undefined;
  const ended = state === 'succeeded' || state === 'failed' || state === 'cancelled' ? state : undefined;
  useInterval(job.reload, REFRESH_MS, id !== undefined && ended === undefined);
  return ended;
}
