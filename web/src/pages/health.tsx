/**
 * Every project's check at once (`GET /api/checks`): which projects QGIS Server refuses or serves
 * with layers missing, and why, filtered by status.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { projectPath } from '../api/projects';
import { Choice } from '../components/choice';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { Badge, CheckFindings, type CheckStatus, layersOk, STATUS_WORDS } from '../components/project-check';
import { TableHead } from '../components/table-head';
import { useApi } from '../components/use-api';
import { Link } from '../router';
import type { PageProps } from '../routes';

const STATUSES: CheckStatus[] = ['broken', 'degraded', 'ok'];
type Filter = CheckStatus | 'troubled' | 'all';

const FILTERS: Array<[Filter, string]> = [
  ['all', 'All projects'],
  ['troubled', 'Broken or degraded'],
  ['broken', 'Broken'],
  ['degraded', 'Degraded'],
  ['ok', 'Ok'],
];

function shown(filter: Filter, status: CheckStatus): boolean {
  if (filter === 'all') return true;
  if (filter === 'troubled') return status !== 'ok';
  return filter === status;
}

export default function HealthPage({ query }: PageProps): JSX.Element {
  const schema = query.get('schema') ?? undefined;
  const checks = useApi((signal) => api.get('/api/checks', { query: schema ? { schema } : {}, signal }), [schema]);
  const [filter, setFilter] = useState<Filter>('all');
  const entries = Object.entries(checks.data ?? {});
  const rows = entries.filter(([, check]) => shown(filter, check.status));
  const counts = STATUSES.map((status) => [status, entries.filter(([, check]) => check.status === status).length]);
  return (
    <Page
      title="Health of the projects"
      actions={
        <button type="button" onClick={checks.reload} disabled={checks.loading}>
          {checks.loading ? 'Checking…' : 'Check again'}
        </button>
      }
    >
      <p class="muted">
        Each project as QGIS Server loads it: its datasources, the files and fonts of its styles, its CRSs
        {schema && `; schema ${schema}`}.
      </p>
      <ErrorMessage error={checks.error} />
      {!checks.data && checks.loading && <Loading what="the checks of every project" />}
      {checks.data && (
        <>
          <p role="status" data-testid="health-summary">
            {entries.length === 0
              ? 'There is no project to check.'
              : counts.map(([status, count]) => `${count} ${status}`).join(', ')}
          </p>
          <div class="inline-form">
            <Choice label="Show" value={filter} options={FILTERS} onChange={setFilter} />
          </div>
          {entries.length > 0 && rows.length === 0 && (
            <p>No project is {filter === 'troubled' ? 'broken or degraded' : filter}.</p>
          )}
          {rows.length > 0 && (
            <table class="table stack">
              <TableHead caption="Projects and their checks" columns={['Project', 'Status', 'Layers', 'Problems']} />
              <tbody>
                {rows.map(([name, check]) => (
                  <tr key={name}>
                    <td data-label="Project">
                      <Link href={projectPath({ project: name, schema })}>{name}</Link>
                    </td>
                    <td data-label="Status">
                      <Badge status={check.status} /> <span class="muted">{STATUS_WORDS[check.status]}</span>
                    </td>
                    <td data-label="Layers">{check.layers.length > 0 ? layersOk(check) : 'none'}</td>
                    <td data-label="Problems">
                      {check.status === 'ok' ? '–' : <CheckFindings check={check} project={name} />}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </Page>
  );
}
