/**
 * The audit log (`GET /api/audit`, docs/access.md): the changes asked of the API, newest first,
 * filtered by project, identity, time and number. Read when the page opens and on each search.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { AccessTabs } from '../components/access-tabs';
import { Choice } from '../components/choice';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { TableHead } from '../components/table-head';
import { useApi } from '../components/use-api';

type Entry = Answer<'/api/audit'>[number];

interface Filters {
  project: string;
  who: string;
  /** A local date and time, as a `datetime-local` field gives it; empty for none. */
  since: string;
  limit: string;
}

const NO_FILTER: Filters = { project: '', who: '', since: '', limit: '100' };
const LIMITS = [
  ['100', 'the newest 100'],
  ['1000', 'the newest 1,000'],
  ['9999', 'the newest 9,999'],
] as const;

/** The API's query for `filters`: the time in UTC, empty fields left out. */
function queryOf(filters: Filters): Record<string, string> {
  const query: Record<string, string> = { limit: filters.limit };
  if (filters.project.trim()) query['project'] = filters.project.trim();
  if (filters.who.trim()) query['who'] = filters.who.trim();
  if (filters.since) query['since'] = new Date(filters.since).toISOString();
  return query;
}

export default function AuditPage(): JSX.Element {
  const [typed, setTyped] = useState<Filters>(NO_FILTER);
  const [asked, setAsked] = useState<Filters>(NO_FILTER);
  const entries = useApi((signal) => api.get('/api/audit', { query: queryOf(asked), signal }), [asked]);
  const field = (name: 'project' | 'who' | 'since') => (event: Event) =>
    setTyped({ ...typed, [name]: (event.currentTarget as HTMLInputElement).value });
  return (
    <Page title="Access">
      <AccessTabs current="/access/audit" />
      <p class="muted">
        Every change asked of the API (any method but GET), done or refused, newest first: who, when, what and the
        answer.
      </p>
      <form
        class="inline-form"
        aria-label="Filter the audit log"
        onSubmit={(event) => {
          event.preventDefault();
          setAsked({ ...typed });
        }}
      >
        <label>
          Project
          <input value={typed.project} onInput={field('project')} />
        </label>
        <label>
          Who
          <input value={typed.who} onInput={field('who')} />
        </label>
        <label>
          Since
          <input type="datetime-local" value={typed.since} onInput={field('since')} />
        </label>
        <Choice
          label="Entries"
          value={typed.limit}
          options={LIMITS}
          onChange={(limit) => setTyped({ ...typed, limit })}
        />
        <button type="submit" class="primary">
          Show
        </button>
      </form>
      <ErrorMessage error={entries.error} />
      {!entries.data && entries.loading && <Loading what="the audit log" />}
      {entries.data && <AuditTable entries={entries.data} />}
    </Page>
  );
}

function AuditTable({ entries }: { entries: Entry[] }): JSX.Element {
  if (entries.length === 0) return <p role="status">No entry matches.</p>;
  return (
    <>
      <p role="status" class="muted">
        {entries.length === 1 ? '1 entry.' : `${entries.length} entries.`}
      </p>
      <table class="table stack">
        <TableHead
          caption="Audit log, newest first"
          columns={['Time', 'Who', 'Request', 'Project', { label: 'Answer', numeric: true }]}
        />
        <tbody>
          {entries.map((entry, index) => (
            <tr key={`${entry.at}#${index}`}>
              <td data-label="Time">
                <time dateTime={entry.at}>{entry.at.replace('T', ' ').replace('Z', '')}</time>
              </td>
              <td data-label="Who">{entry.who ?? 'no identity (access control off)'}</td>
              <td data-label="Request">
                <code>
                  {entry.method} {entry.path}
                </code>
              </td>
              <td data-label="Project">{entry.project ?? ''}</td>
              <td data-label="Answer" class={entry.status >= 400 ? 'number error-inline' : 'number'}>
                {entry.status}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
