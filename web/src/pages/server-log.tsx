/**
 * Steward's own recent log (`GET /api/log`), followed from a cursor while the tab is visible, newest
 * first, filtered by level.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { Choice } from '../components/choice';
import { ErrorMessage } from '../components/messages';
import { Page } from '../components/page';
import { ServerTabs } from '../components/server-tabs';
import { TableHead } from '../components/table-head';
import { useCursorLines } from '../components/use-cursor-lines';

type Line = Answer<'/api/log'>['lines'][number];
type Level = 'debug' | 'info' | 'warn' | 'error';

const POLL_MS = 2000;
/** As many lines as Steward keeps. */
const KEPT = 2000;
const LEVELS: Array<[Level, string]> = [
  ['debug', 'Everything'],
  ['info', 'Information and above'],
  ['warn', 'Warnings and errors'],
  ['error', 'Errors only'],
];

/** A line's other fields, as `key=value`, for the rare line that has them (a request, an error). */
function details(fields: Line['fields']): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
}

export default function ServerLogPage(): JSX.Element {
  const [level, setLevel] = useState<Level>('info');
  const [live, setLive] = useState(true);
  const log = useCursorLines(
    (since, signal) => api.get('/api/log', { query: { since: String(since ?? 0), level }, signal }),
    [level],
    { ms: POLL_MS, live, keep: KEPT },
  );
  const newestFirst = [...log.lines].reverse();
  return (
    <Page title="Server">
      <ServerTabs current="/server/log" />
      <p class="muted">
        This Steward process’s recent log, newest first: the last {KEPT} lines it keeps in memory, read every{' '}
        {POLL_MS / 1000} s while this tab is visible.
      </p>
      <div class="inline-form">
        <Choice label="Levels" value={level} options={LEVELS} onChange={setLevel} />
        <label class="check">
          <input type="checkbox" checked={live} onChange={(event) => setLive(event.currentTarget.checked)} />
          Follow new lines
        </label>
      </div>
      <ErrorMessage error={log.error} />
      {log.missed > 0 && (
        <p class="error" role="status">
          {log.missed} lines were dropped from memory before this page could read them.
        </p>
      )}
      <p role="status" data-testid="log-count">
        {log.lines.length === 0 ? 'No line at this level yet.' : `${log.lines.length} lines shown.`}
      </p>
      {newestFirst.length > 0 && (
        <div class="scroll-box" tabIndex={0} role="region" aria-label="Log lines">
          <table class="table log-table">
            <TableHead caption="Steward’s log lines, newest first" columns={['Time', 'Level', 'Message', 'Details']} />
            <tbody>
              {newestFirst.map((line) => (
                <tr key={line.cursor} class={`level-${line.level}`}>
                  <td data-label="Time">
                    <time dateTime={line.time}>{line.time.replace('T', ' ').replace('Z', '')}</time>
                  </td>
                  <td data-label="Level">{line.level}</td>
                  <td data-label="Message">{line.message}</td>
                  <td data-label="Details" class="muted">
                    {details(line.fields)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
