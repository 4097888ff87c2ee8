/** Long work of a project (seeding, truncation, processing) and its progress, from `GET /api/jobs`. */
import type { JSX } from 'preact';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from './messages';
import { useAction, useApi, useInterval } from './use-api';

const REFRESH_MS = 1000;

export function JobList({ project, kinds }: { project: ProjectRef; kinds: string[] }): JSX.Element {
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
          <caption class="visually-hidden">Jobs of {project.project}</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">State</th>
              <th scope="col">Progress</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
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
                  {Math.round(job.progress * 100)}%{job.total > 0 && ` (${job.done} of ${job.total})`}
                </td>
                <td>{new Date(job.created).toLocaleString()}</td>
                <td>
                  {(job.state === 'queued' || job.state === 'running') && (
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
