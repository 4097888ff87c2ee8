/** A project's versions: the list, the difference of one with the newest, and its restore after a confirmation. */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { type ProjectRef, projectRef, schemaQuery } from '../api/projects';
import { Dialog } from '../components/dialog';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { ProjectTabs } from '../components/project-tabs';
import { TableHead } from '../components/table-head';
import { useMayWrite } from '../components/use-access';
import { useAction, useApi } from '../components/use-api';
import type { PageProps } from '../routes';

type Version = Answer<'/api/projects/{project}/versions'>['versions'][number];
type Diff = Answer<'/api/projects/{project}/versions/{version}/diff'>;

const PAGE = 50;

export default function HistoryPage({ params, query }: PageProps): JSX.Element {
  const ref = projectRef(params, query);
  const [before, setBefore] = useState<string | undefined>(undefined);
  const [chosen, setChosen] = useState<Version | undefined>(undefined);
  const list = useApi(
    (signal) =>
      api.get('/api/projects/{project}/versions', {
        path: { project: ref.project },
        query: { ...schemaQuery(ref), limit: String(PAGE), ...(before && { before }) },
        signal,
      }),
    [ref.project, ref.schema, before],
  );
  const newest = before === undefined ? list.data?.versions[0] : undefined;
  return (
    <Page title={`${ref.project}: history`}>
      <ProjectTabs project={ref} current="/history" />
      <div class="grid-2">
        <section class="card" aria-labelledby="versions-title">
          <h2 id="versions-title">Versions</h2>
          <ErrorMessage error={list.error} />
          {!list.data && list.loading && <Loading what="the versions" />}
          {list.data && (
            <table>
              <TableHead caption={`Versions of ${ref.project}`} columns={['Version', 'Time', 'Who', 'Change']} />
              <tbody>
                {list.data.versions.map((version) => (
                  <tr key={version.id} aria-selected={chosen?.id === version.id}>
                    <td>
                      <button type="button" class="link" onClick={() => setChosen(version)}>
                        {version.id}
                      </button>
                    </td>
                    <td>{new Date(version.time).toLocaleString()}</td>
                    <td>{version.who}</td>
                    <td>{version.summary}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p>
            {before !== undefined && (
              <button type="button" onClick={() => setBefore(undefined)}>
                Newest
              </button>
            )}{' '}
            {list.data?.next && (
              <button type="button" onClick={() => setBefore(list.data?.next ?? undefined)}>
                Older
              </button>
            )}
          </p>
        </section>
        {chosen && (
          <VersionDetail
            project={ref}
            version={chosen}
            newest={newest}
            onRestored={() => {
              setChosen(undefined);
              setBefore(undefined);
              list.reload();
            }}
          />
        )}
      </div>
    </Page>
  );
}

interface DetailProps {
  project: ProjectRef;
  version: Version;
  newest: Version | undefined;
  onRestored: () => void;
}

function VersionDetail({ project, version, newest, onRestored }: DetailProps): JSX.Element {
  const [confirming, setConfirming] = useState(false);
  const [force, setForce] = useState(false);
  const path = { project: project.project, version: version.id };
  const diff = useApi(
    (signal) =>
      newest && newest.id !== version.id
        ? api.get('/api/projects/{project}/versions/{version}/diff', {
            path,
            query: { ...schemaQuery(project), to: newest.id },
            signal,
          })
        : Promise.resolve(undefined),
    [project.project, project.schema, version.id, newest?.id],
  );
  const mayWrite = useMayWrite(project);
  const restore = useAction(async () => {
    await api.post('/api/projects/{project}/versions/{version}/restore', {
      path,
      query: { ...schemaQuery(project), ...(force && { force: 'true' as const }) },
    });
    setConfirming(false);
    onRestored();
  });
  return (
    <section class="card" aria-labelledby="version-title">
      <h2 id="version-title">
        Version {version.id}: {version.summary}
      </h2>
      <p class="muted">
        {new Date(version.time).toLocaleString()} by {version.who} {version.route && `(${version.route})`}
      </p>
      {mayWrite && (
        <button type="button" onClick={() => setConfirming(true)}>
          Restore this version
        </button>
      )}
      <ErrorMessage error={diff.error} />
      {diff.loading && <Loading what="the difference" />}
      {diff.data && <DiffView diff={diff.data} />}
      <Dialog title={`Restore version ${version.id}?`} open={confirming} onClose={() => setConfirming(false)}>
        <p>
          The project becomes as it was at version {version.id}, styles included, in a new version; QGIS Server serves
          it at once. Restoring the version before undoes it.
        </p>
        <label>
          <input type="checkbox" checked={force} onChange={(event) => setForce(event.currentTarget.checked)} /> Restore
          even if layers read data files that are gone
        </label>
        <ErrorMessage error={restore.error} />
        <p>
          <button type="button" disabled={restore.busy} onClick={() => void restore.run()}>
            Restore
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </p>
      </Dialog>
    </section>
  );
}

function names(list: string[]): string {
  return list.length === 0 ? 'none' : list.join(', ');
}

function DiffView({ diff }: { diff: Diff }): JSX.Element {
  return (
    <>
      <h3>From this version to the newest</h3>
      <dl class="facts">
        <dt>Layers added</dt>
        <dd>{names(diff.layers.added)}</dd>
        <dt>Layers removed</dt>
        <dd>{names(diff.layers.removed)}</dd>
        <dt>Layers changed</dt>
        <dd>
          {diff.layers.changed.length === 0
            ? 'none'
            : diff.layers.changed.map((change) => (
                <div key={change.name}>
                  {change.name}: {[...change.properties, ...change.styles.map((style) => `style ${style}`)].join(', ')}
                </div>
              ))}
        </dd>
        <dt>Layer tree</dt>
        <dd>{diff.tree ? 'changed' : 'unchanged'}</dd>
        <dt>Settings</dt>
        <dd>{names(diff.settings)}</dd>
        <dt>Styles</dt>
        <dd>
          added {names(diff.styles.added)}; removed {names(diff.styles.removed)}; changed {names(diff.styles.changed)}
        </dd>
      </dl>
      <details>
        <summary>The project file's difference</summary>
        <pre class="diff" tabIndex={0} aria-label={`The project file from version ${diff.from} to version ${diff.to}`}>
          {diff.text}
        </pre>
      </details>
    </>
  );
}
