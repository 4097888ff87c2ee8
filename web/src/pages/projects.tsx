import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { projectPath } from '../api/projects';
import { Choice } from '../components/choice';
import { Dialog } from '../components/dialog';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { Pager } from '../components/pager';
import { PublishForm } from '../components/publish-form';
import { type Column, type SortState, TableHead } from '../components/table-head';
import { useAdministrator, writes } from '../components/use-access';
import { useAction, useApi } from '../components/use-api';
import { Link, navigate } from '../router';
import type { PageProps } from '../routes';

type ProjectRow = Answer<'/api/project-summaries'>['projects'][number];
type SortKey = 'name' | 'layers' | 'author';
type Order = 'asc' | 'desc';

/** The orders of the narrow screens' picker, where the table's headings are hidden. */
const SORTS: Array<[`${SortKey} ${Order}`, string]> = [
  ['name asc', 'Name, A to Z'],
  ['name desc', 'Name, Z to A'],
  ['layers desc', 'Most layers'],
  ['layers asc', 'Fewest layers'],
  ['author asc', 'Author, A to Z'],
  ['author desc', 'Author, Z to A'],
];

/** Projects a page shows. */
const PAGE_SIZE = 50;
/** How long typing pauses before the search is sent. */
const SEARCH_PAUSE_MS = 250;

function sortState(column: SortKey, sort: SortKey, order: Order): SortState {
  if (column !== sort) return 'none';
  return order === 'asc' ? 'ascending' : 'descending';
}

/** The search as typed, sent once typing pauses. */
function useSearch(): { typed: string; setTyped: (value: string) => void; q: string } {
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setQ(typed.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  return { typed, setTyped, q };
}

export default function ProjectsPage({ query }: PageProps): JSX.Element {
  const schema = query.get('schema') ?? '';
  const server = useApi((signal) => api.get('/api/server', { signal }), []);
  const search = useSearch();
  const [sort, setSort] = useState<SortKey>('name');
  const [order, setOrder] = useState<Order>('asc');
  // A page belongs to the list it pages: another search, schema or order starts again at the first.
  const list = [schema, search.q, sort, order].join('\n');
  const [paging, setPaging] = useState({ list, offset: 0 });
  const offset = paging.list === list ? paging.offset : 0;
  const projects = useApi(
    (signal) =>
      api.get('/api/project-summaries', {
        query: {
          ...(schema ? { schema } : {}),
          ...(search.q ? { q: search.q } : {}),
          sort,
          order,
          limit: String(PAGE_SIZE),
          offset: String(offset),
        },
        signal,
      }),
    [schema, search.q, sort, order, offset],
  );
  const [deleting, setDeleting] = useState<ProjectRow | undefined>(undefined);
  const postgres = server.data?.storage === 'postgresql';
  const listed = projects.data;
  const sortBy = (column: SortKey) => () => {
    setOrder(column === sort && order === 'asc' ? 'desc' : 'asc');
    setSort(column);
  };
  const sortable = (label: string, column: SortKey, numeric?: true): Column => ({
    label,
    ...(numeric && { numeric }),
    sort: { state: sortState(column, sort, order), onSort: sortBy(column) },
  });
  const searching = search.typed.trim() !== '' || search.q !== '';
  // Creating a project needs admin of its name: the console offers it to administrators.
  const administrator = useAdministrator() === true;
  return (
    <Page title="Projects">
      {postgres && <SchemaPicker schema={schema} />}
      <ErrorMessage error={server.error ?? projects.error} />
      {listed === undefined && projects.loading && <Loading what="projects" />}
      {administrator && listed && listed.total === 0 && !schema && !searching && (
        <FirstProject demo={server.data?.data_roots.find((root) => /\/demo\/?$/.test(root))} />
      )}
      {listed && (listed.total > 0 || searching) && (
        <>
          <div class="inline-form">
            <label>
              Search projects
              <input
                type="search"
                value={search.typed}
                placeholder="name or title"
                onInput={(event) => search.setTyped(event.currentTarget.value)}
              />
            </label>
            <Choice
              class="narrow-only"
              label="Sort by"
              value={`${sort} ${order}`}
              options={SORTS}
              onChange={(value) => {
                const [column, direction] = value.split(' ') as [SortKey, Order];
                setSort(column);
                setOrder(direction);
              }}
            />
          </div>
          {listed.total === 0 && <p>No project matches “{search.q}”.</p>}
        </>
      )}
      {listed && listed.projects.length > 0 && (
        <table class="table stack">
          <TableHead
            caption={`Projects${schema ? ` in schema ${schema}` : ''}`}
            columns={[
              sortable('Name', 'name'),
              'Storage',
              sortable('Layers', 'layers', true),
              'CRS',
              sortable('Author', 'author'),
              'Pinned',
            ]}
            actions
          />
          <tbody>
            {listed.projects.map((project) => (
              <tr key={project.name}>
                <td data-label="Name">
                  <Link href={projectPath({ project: project.name, schema: schema || undefined })}>{project.name}</Link>
                  {project.error && <span class="error-inline"> {project.error}</span>}
                </td>
                <td data-label="Storage">
                  {project.schema ? `${project.storage} (schema ${project.schema})` : project.storage}
                </td>
                <td class="number" data-label="Layers">
                  {project.layers ?? '–'}
                </td>
                <td data-label="CRS">{project.crs}</td>
                <td data-label="Author">{project.author}</td>
                <td data-label="Pinned">
                  {writes(project.access) ? (
                    <PinToggle project={project} schema={schema || undefined} onChanged={projects.reload} />
                  ) : project.pinned ? (
                    'yes'
                  ) : (
                    'no'
                  )}
                </td>
                <td>
                  {project.access === 'admin' && (
                    <button
                      type="button"
                      class="danger"
                      onClick={() => setDeleting(project)}
                      aria-label={`Delete project ${project.name}`}
                    >
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listed && listed.total > listed.limit && (
        <Pager
          what="Projects"
          total={listed.total}
          offset={listed.offset}
          limit={listed.limit}
          shown={listed.projects.length}
          onOffset={(next) => setPaging({ list, offset: next })}
        />
      )}
      {administrator && (
        <>
          <NewProjectForm schema={schema} postgres={postgres} onCreated={projects.reload} />
          <section class="card" aria-labelledby="publish-title">
            <h2 id="publish-title">Publish from QGIS Desktop</h2>
            <PublishForm schema={schema || undefined} acceptDrops onPublished={projects.reload} />
          </section>
        </>
      )}
      {deleting && (
        <DeleteProject
          project={deleting}
          schema={schema || undefined}
          onClose={() => setDeleting(undefined)}
          onDeleted={projects.reload}
        />
      )}
    </Page>
  );
}

/**
 * Pins or unpins a project: a pinned project is loaded by every QGIS Server instance as soon as it
 * connects (and by the connected ones when it is pinned).
 */
function PinToggle(props: { project: ProjectRow; schema: string | undefined; onChanged: () => void }): JSX.Element {
  const { name, pinned } = props.project;
  // Shown at once on a change, and as stored once the list is read again (or the change failed).
  const [checked, setChecked] = useState(pinned);
  useEffect(() => setChecked(pinned), [pinned]);
  const options = { path: { project: name }, query: props.schema ? { schema: props.schema } : {} };
  const toggle = useAction(async (pin: boolean) => {
    if (pin) await api.put('/api/projects/{project}/pin', options);
    else await api.delete('/api/projects/{project}/pin', options);
  });
  const change = async (pin: boolean): Promise<void> => {
    setChecked(pin);
    if (await toggle.run(pin)) props.onChanged();
    else setChecked(pinned);
  };
  return (
    <>
      <label class="check" title="A pinned project is loaded by every QGIS Server instance as soon as it connects">
        <input
          type="checkbox"
          checked={checked}
          disabled={toggle.busy || props.project.error !== undefined}
          onChange={(event) => void change(event.currentTarget.checked)}
        />
        <span class="visually-hidden">Pin project {name}</span>
      </label>
      <ErrorMessage error={toggle.error} />
    </>
  );
}

function SchemaPicker({ schema }: { schema: string }): JSX.Element {
  const [value, setValue] = useState(schema);
  const submit = (event: Event): void => {
    event.preventDefault();
    navigate(value ? `/?schema=${encodeURIComponent(value)}` : '/');
  };
  return (
    <form class="inline-form" onSubmit={submit}>
      <label for="schema-picker">Database schema</label>
      <input
        id="schema-picker"
        value={value}
        placeholder="public"
        onInput={(event) => setValue(event.currentTarget.value)}
      />
      <button type="submit">Show projects</button>
    </form>
  );
}

function NewProjectForm(props: { schema: string; postgres: boolean; onCreated: () => void }): JSX.Element {
  const [name, setName] = useState('');
  const [author, setAuthor] = useState('');
  const [schema, setSchema] = useState(props.schema);
  const create = useAction(async () => {
    await api.post('/api/projects', { body: { name, author, ...(props.postgres && schema ? { schema } : {}) } });
  });
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (await create.run()) {
      setName('');
      props.onCreated();
      navigate(projectPath({ project: name, schema: props.postgres && schema ? schema : undefined }));
    }
  };
  return (
    <form class="card form" onSubmit={(event) => void submit(event)} aria-labelledby="new-project-title">
      <h2 id="new-project-title">New project</h2>
      <div class="fields">
        <label>
          Name
          <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          Author
          <input required value={author} onInput={(event) => setAuthor(event.currentTarget.value)} />
        </label>
        {props.postgres && (
          <label>
            Schema
            <input value={schema} placeholder="public" onInput={(event) => setSchema(event.currentTarget.value)} />
          </label>
        )}
      </div>
      <ErrorMessage error={create.error} />
      <button type="submit" class="primary" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create project'}
      </button>
    </form>
  );
}

function DeleteProject(props: {
  project: ProjectRow;
  schema: string | undefined;
  onClose: () => void;
  onDeleted: () => void;
}): JSX.Element {
  const { name } = props.project;
  const query = props.schema ? { schema: props.schema } : {};
  const lost = useApi(
    async (signal) => {
      const path = { project: name };
      const [layers, styles] = await Promise.all([
        api.get('/api/projects/{project}/layers', { path, query, signal }),
        api.get('/api/projects/{project}/styles', { path, query, signal }),
      ]);
      return { layers, styles };
    },
    [name],
  );
  const remove = useAction(() => api.delete('/api/projects/{project}', { path: { project: name }, query }));
  const confirm = async (): Promise<void> => {
    if (await remove.run()) {
      props.onClose();
      props.onDeleted();
    }
  };
  return (
    <Dialog title={`Delete project “${name}”?`} open onClose={props.onClose}>
      {/* One element whatever it shows: the buttons below stay the same, and keep the focus. */}
      <div>
        {lost.data ? (
          <>
            <p>This removes the project from QGIS Server and deletes, for good:</p>
            <ul>
              <li>
                {lost.data.layers.length} layer{lost.data.layers.length === 1 ? '' : 's'}
                {lost.data.layers.length > 0 && `: ${lost.data.layers.join(', ')}`}
              </li>
              <li>
                {lost.data.styles.length} style{lost.data.styles.length === 1 ? '' : 's'}
                {lost.data.styles.length > 0 && `: ${lost.data.styles.join(', ')}`}
              </li>
              <li>its default styles and its tile cache</li>
            </ul>
            <p>The data files and tables the layers read stay where they are.</p>
          </>
        ) : (
          <Loading what="what the project holds" />
        )}
      </div>
      <ErrorMessage error={lost.error ?? remove.error} />
      <div class="dialog-actions">
        <button type="button" onClick={props.onClose}>
          Keep it
        </button>
        <button type="button" class="danger" disabled={remove.busy} onClick={() => void confirm()}>
          {remove.busy ? 'Deleting…' : `Delete ${name}`}
        </button>
      </div>
    </Dialog>
  );
}

/** Makes project "demo" with every layer of the demo dataset, the first map of a newcomer. */
async function makeDemoProject(folder: string): Promise<void> {
  const listing = await api.get('/api/datasources/files', { query: { path: folder } });
  const candidates = listing.datasets.flatMap((dataset) => dataset.layers);
  if (candidates.length === 0) throw new Error(`the demo folder ${folder} holds no data: run scripts/setup.sh`);
  await api.post('/api/projects', { body: { name: 'demo', author: 'Steward demo' } });
  // A new layer goes to the bottom of the layer tree: vectors first, so that they are drawn over the rasters.
  const ordered = [...candidates].sort((a, b) => (a.type === b.type ? 0 : a.type === 'raster' ? 1 : -1));
  for (const layer of ordered) {
    await api.post('/api/projects/{project}/layers', {
      path: { project: 'demo' },
      body: { datasource: layer.datasource, name: layer.name, type: layer.type },
    });
  }
}

/** The empty state: how to make a first project, from the demo dataset when `npm start` offers it. */
function FirstProject({ demo }: { demo: string | undefined }): JSX.Element {
  const make = useAction(async () => {
    if (demo) await makeDemoProject(demo);
  });
  return (
    <section class="card empty" aria-labelledby="first-project-title">
      <h2 id="first-project-title">No project yet</h2>
      <p>A project is what QGIS Server publishes: its layers, their styles and its map. To make your first one:</p>
      {demo && (
        <p>
          <button
            type="button"
            class="primary"
            disabled={make.busy}
            onClick={() => void make.run().then((done) => done && navigate('/projects/demo'))}
          >
            {make.busy ? 'Making the demo project…' : 'Make a demo project'}
          </button>{' '}
          from the demo dataset in <code>{demo}</code> (a small made-up town: districts, roads, places and an elevation
          grid), or by hand:
        </p>
      )}
      <ErrorMessage error={make.error} />
      <ol>
        <li>Create a project below (a name and an author are enough).</li>
        <li>
          On its page, choose <strong>Add layer</strong> and pick a file in the data folders
          {demo ? (
            <>
              {' '}
              (for example <code>town.gpkg</code> in the demo folder)
            </>
          ) : null}
          .
        </li>
        <li>The map appears as soon as the first layer is added.</li>
      </ol>
    </section>
  );
}
