/**
 * Projects on every connected QGIS Server instance: the pinned ones (`GET /api/pins`), which each
 * instance loads as soon as it connects, and a project loaded again everywhere
 * (`POST /api/projects/{project}/reload`), as after its file was changed outside Steward; each
 * instance's answer is shown.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { ErrorMessage, Loading } from './messages';
import { TableHead } from './table-head';
import { useAction, useApi } from './use-api';

type Reloads = Answer<'/api/projects/{project}/reload', 'post'>['instances'];

/** Each status in words (docs/instances.md): a pool's process reloads at its next request. */
const STATUS_WORDS: Record<Reloads[number]['status'], string> = {
  reloaded: 'reloaded',
  pending: 'dropped: its next request loads it again',
  refused: 'refused to load it',
  failed: 'did not answer',
};

/** What each instance answered, in a sentence each. */
function ReloadOutcome(props: { project: string; reloads: Reloads }): JSX.Element {
  if (props.reloads.length === 0)
    return <p role="status">No instance is connected: {props.project} loads when one asks for it.</p>;
  return (
    <div role="status">
      <ul aria-label={`Reloads of ${props.project}`}>
        {props.reloads.map((reload) => (
          <li key={reload.instance}>
            {reload.instance}: {STATUS_WORDS[reload.status]}
            {reload.error !== undefined && <span class="error-inline"> ({reload.error})</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A reload of a project on every instance, and what each answered. */
function useReload(): {
  run: (project: string, schema: string) => Promise<boolean>;
  busy: boolean;
  outcome: JSX.Element | undefined;
} {
  const [done, setDone] = useState<{ project: string; reloads: Reloads } | undefined>(undefined);
  const reload = useAction(async (project: string, schema: string) => {
    setDone(undefined);
    const answer = await api.post('/api/projects/{project}/reload', {
      path: { project },
      query: schema === 'public' ? {} : { schema },
    });
    setDone({ project, reloads: answer.instances });
  });
  const outcome = (
    <>
      <ErrorMessage error={reload.error} />
      {done && <ReloadOutcome project={done.project} reloads={done.reloads} />}
    </>
  );
  return { run: reload.run, busy: reload.busy, outcome };
}

/** Reloads `project` (of `schema`) on every instance, on a button of its own. */
function ReloadButton(props: { project: string; schema: string }): JSX.Element {
  const reload = useReload();
  return (
    <>
      <button
        type="button"
        disabled={reload.busy}
        aria-label={`Reload ${props.project} on every instance`}
        onClick={() => void reload.run(props.project, props.schema)}
      >
        {reload.busy ? 'Reloading…' : 'Reload everywhere'}
      </button>
      {reload.outcome}
    </>
  );
}

export function FleetProjects(): JSX.Element {
  const pins = useApi((signal) => api.get('/api/pins', { signal }), []);
  const [project, setProject] = useState('');
  const reload = useReload();
  return (
    <section class="card" aria-labelledby="fleet-title">
      <h2 id="fleet-title">Projects on every instance</h2>
      <p class="muted">
        A pinned project is loaded by every instance as soon as it connects (pin it on the Projects page). Reload a
        project everywhere after its file was changed outside Steward.
      </p>
      <ErrorMessage error={pins.error} />
      {!pins.data && pins.loading && <Loading what="the pinned projects" />}
      {pins.data && pins.data.pins.length === 0 && <p class="muted">No project is pinned.</p>}
      {pins.data && pins.data.pins.length > 0 && (
        <table class="table">
          <TableHead caption="Pinned projects" columns={['Project', 'Pinned by', 'Reload']} />
          <tbody>
            {pins.data.pins.map((pin) => (
              <tr key={`${pin.schema}/${pin.project}`}>
                <td>
                  {pin.project}
                  {pin.schema !== 'public' && <span class="muted"> ({pin.schema})</span>}
                </td>
                <td>{pin.source === 'environment' ? 'STEWARD_PINNED_PROJECTS' : 'the API'}</td>
                <td>
                  <ReloadButton project={pin.project} schema={pin.schema} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        class="inline-form"
        aria-label="Reload a project on every instance"
        onSubmit={(event) => {
          event.preventDefault();
          void reload.run(project.trim(), 'public');
        }}
      >
        <label>
          Project
          <input required value={project} onInput={(event) => setProject(event.currentTarget.value)} />
        </label>
        <button type="submit" disabled={reload.busy}>
          {reload.busy ? 'Reloading…' : 'Reload everywhere'}
        </button>
      </form>
      {reload.outcome}
    </section>
  );
}
