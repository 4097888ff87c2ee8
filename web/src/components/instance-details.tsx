/**
 * What an instance holds and runs with: the projects in its cache, and its process, machine,
 * server settings and fonts (`/projects` and `/about` of the instance). Both are read once and
 * again on demand: they change with reloads and restarts, not by the second.
 */
import type { JSX } from 'preact';

import { type Answer, api } from '../api/client';
import { inBytes } from '../format';
import { ErrorMessage, Loading } from './messages';
import { TableHead } from './table-head';
import { useApi } from './use-api';

type About = Answer<'/api/instances/{instance}/about'>;
type CachedProject = Answer<'/api/instances/{instance}/projects'>['projects'][number];

const SOURCE_WORDS: Record<About['settings']['values'][number]['source'], string> = {
  environment: 'environment',
  ini: 'ini file',
  default: 'default',
};

/** `3 h 12 min`, `45 s`. */
function inTime(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours > 0) return `${hours} h ${minutes} min`;
  return minutes > 0 ? `${minutes} min ${Math.floor(seconds % 60)} s` : `${Math.floor(seconds)} s`;
}

export function CachedProjects({ id }: { id: string }): JSX.Element {
  const cached = useApi(
    (signal) => api.get('/api/instances/{instance}/projects', { path: { instance: id }, signal }),
    [id],
  );
  const projects = cached.data?.projects ?? [];
  return (
    <>
      <div class="inline-form">
        <button type="button" onClick={cached.reload} disabled={cached.loading}>
          Read again
        </button>
      </div>
      <ErrorMessage error={cached.error} />
      {!cached.data && cached.loading && <Loading what="the cached projects" />}
      {cached.data && projects.length === 0 && <p>No project is in this instance's cache.</p>}
      {projects.length > 0 && (
        <table class="table stack">
          <TableHead
            caption="Projects in the cache"
            columns={['Project file', 'Title', 'Loaded', 'Layers', 'Invalid']}
          />
          <tbody>
            {projects.map((project) => (
              <CachedProjectRow key={project.map} project={project} />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function CachedProjectRow({ project }: { project: CachedProject }): JSX.Element {
  const invalid = project.invalid_layers;
  return (
    <tr>
      <td data-label="Project file">{project.map}</td>
      <td data-label="Title">{project.title || '–'}</td>
      <td data-label="Loaded">{new Date(project.loaded).toLocaleString()}</td>
      <td data-label="Layers" class="number">
        {project.layers}
      </td>
      <td data-label="Invalid">{invalid.length > 0 ? invalid.join(', ') : 'none'}</td>
    </tr>
  );
}

export function InstanceAbout({ id }: { id: string }): JSX.Element {
  const about = useApi(
    (signal) => api.get('/api/instances/{instance}/about', { path: { instance: id }, signal }),
    [id],
  );
  return (
    <>
      <ErrorMessage error={about.error} />
      {!about.data && about.loading && <Loading what="the process and settings" />}
      {about.data && <AboutFacts about={about.data} />}
    </>
  );
}

function AboutFacts({ about }: { about: About }): JSX.Element {
  const { process, settings, fonts } = about;
  return (
    <>
      <dl class="facts" data-testid="instance-process">
        <dt>Process</dt>
        <dd>{process.pid}</dd>
        <dt>Memory</dt>
        <dd>
          {inBytes(process.memory_bytes)} (peak {inBytes(process.peak_memory_bytes)})
        </dd>
        <dt>Running for</dt>
        <dd>{inTime(process.uptime_seconds)}</dd>
        <dt>Machine load</dt>
        <dd>
          {[process.load['1m'], process.load['5m'], process.load['15m']].map((load) => load.toFixed(2)).join(', ')} on{' '}
          {process.cpus} CPUs
        </dd>
        <dt>Settings file</dt>
        <dd>{settings.ini_file || 'none'}</dd>
        <dt>Fonts</dt>
        <dd>
          {fonts.length > 0
            ? `${fonts.length}: ${fonts.slice(0, 12).join(', ')}${fonts.length > 12 ? ', …' : ''}`
            : 'none'}
        </dd>
      </dl>
      <table class="table stack">
        <TableHead caption="QGIS Server settings" columns={['Setting', 'Value', 'From']} />
        <tbody>
          {settings.values.map((setting) => (
            <tr key={setting.name}>
              <td data-label="Setting">
                <code>{setting.name}</code>
              </td>
              <td data-label="Value">
                {setting.value === '' ? <span class="muted">not set</span> : String(setting.value)}
              </td>
              <td data-label="From">{SOURCE_WORDS[setting.source]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
