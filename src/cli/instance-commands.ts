/**
 * The `steward` subcommands that show what each QGIS Server instance reports through its plugin
 * (its cache, settings, versions, process) and reload a project on every instance.
 */
import type { InstanceSummary } from '../monitor/connection.js';
import type { InstanceAbout, InstanceMetadata, InstanceProjects } from '../monitor/protocol.js';
import { CliError, HttpError, type StewardApi } from './api.js';
import { type Command, json, JSON_OPTION } from './command.js';
import { pinnedMaps } from './fleet-commands.js';
import { duration, loadAverage, mebibytes } from './format.js';
import { formatTable } from './table.js';

/** What one instance answered, or why it did not. */
export type InstanceAnswer<T> = { id: string; answer: T } | { id: string; error: string };

/** Asks every registered instance; one gone since the listing (404) is left out. */
export async function askEveryInstance<T>(
  api: StewardApi,
  ask: (instance: InstanceSummary) => Promise<T>,
): Promise<InstanceAnswer<T>[]> {
  const servers = await api.instances();
  const answers = await Promise.all(servers.map((instance) => askInstance(instance, ask)));
  return answers.filter((answer) => answer !== undefined);
}

async function askInstance<T>(
  instance: InstanceSummary,
  ask: (instance: InstanceSummary) => Promise<T>,
): Promise<InstanceAnswer<T> | undefined> {
  try {
    return { id: instance.id, answer: await ask(instance) };
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return error.status === 404 ? undefined : { id: instance.id, error: error.message };
  }
}

interface InstanceOverview {
  host: string;
  qgis_version: string;
  projects_cached: number;
  /** How many of the pinned projects the instance holds in its cache. */
  pinned_cached: number;
  memory_bytes: number;
  uptime_seconds: number;
  load: InstanceAbout['process']['load'];
}

async function overview(api: StewardApi, { id, ip }: InstanceSummary, pins: Set<string>): Promise<InstanceOverview> {
  const [metadata, cache, about] = await Promise.all([api.metadata(id), api.projects(id), api.about(id)]);
  const { memory_bytes, uptime_seconds, load } = about.process;
  const projects_cached = cache.projects.length;
  const pinned_cached = cache.projects.filter(({ map }) => pins.has(map)).length;
  const qgis_version = metadata.versions.qgis;
  return { host: ip, qgis_version, projects_cached, pinned_cached, memory_bytes, uptime_seconds, load };
}

function overviewTable(answers: InstanceAnswer<InstanceOverview>[], pinned: number): string {
  const rows = answers.map((row) =>
    'error' in row
      ? [row.id, '-', '-', '-', '-', '-', '-', row.error]
      : [
          row.id,
          row.answer.host,
          row.answer.qgis_version,
          String(row.answer.projects_cached),
          `${row.answer.pinned_cached}/${pinned}`,
          mebibytes(row.answer.memory_bytes),
          duration(row.answer.uptime_seconds * 1000),
          loadAverage(row.answer.load),
        ],
  );
  return formatTable(['INSTANCE ID', 'HOST', 'VERSION', 'PROJECTS', 'PINNED', 'MEMORY', 'UPTIME', 'LOAD'], rows);
}

export const instances: Command = {
  summary: 'List the instances with their QGIS version, cached and pinned projects, memory, uptime and load',
  arguments: [],
  options: JSON_OPTION,
  async run(api, { flags }, io) {
    const pins = await pinnedMaps(api);
    const answers = await askEveryInstance(api, (instance) => overview(api, instance, pins));
    io.out(flags['json'] ? json(answers) : overviewTable(answers, pins.size));
  },
};

function projectsText({ projects }: InstanceProjects, pins: Set<string>): string {
  const rows = projects.map((project) => [
    project.map,
    project.title,
    project.loaded,
    String(project.layers),
    project.invalid_layers.join(', ') || '-',
    pins.has(project.map) ? 'yes' : 'no',
  ]);
  return formatTable(['MAP', 'TITLE', 'LOADED', 'LAYERS', 'INVALID LAYERS', 'PINNED'], rows);
}

function settingsText({ settings }: InstanceAbout): string {
  const rows = settings.values.map(({ name, value, source }) => [name, String(value), source]);
  return `ini file: ${settings.ini_file}\n\n${formatTable(['SETTING', 'VALUE', 'SOURCE'], rows)}`;
}

type About = Pick<InstanceMetadata, 'versions' | 'providers' | 'plugins'> & Omit<InstanceAbout, 'settings'>;

function aboutText({ versions, providers, plugins, fonts, process }: About): string {
  const lines = [
    ['QGIS', versions.qgis],
    ['GDAL', versions.gdal],
    ['Qt', versions.qt],
    ['Python', versions.python],
    ['Providers', providers.join(', ')],
    ['Plugins', plugins.join(', ') || '-'],
    ['Fonts', `${fonts.length} families`],
    ['Process', `pid ${process.pid}, up ${duration(process.uptime_seconds * 1000)}`],
    ['Memory', `${mebibytes(process.memory_bytes)} (peak ${mebibytes(process.peak_memory_bytes)})`],
    ['Load', `${loadAverage(process.load)} (${process.cpus} CPUs)`],
  ];
  return lines.map(([label = '', value = '']) => `${label.padEnd(10)} ${value}\n`).join('');
}

/** Each view of `steward instance`: what it asks, as JSON and as text. */
const views: Record<string, (api: StewardApi, id: string) => Promise<{ value: unknown; text: string }>> = {
  async projects(api, id) {
    const [value, pins] = await Promise.all([api.projects(id), pinnedMaps(api)]);
    return { value, text: projectsText(value, pins) };
  },
  async settings(api, id) {
    const value = await api.about(id);
    return { value: value.settings, text: settingsText(value) };
  },
  async about(api, id) {
    const [{ versions, providers, plugins }, { fonts, process }] = await Promise.all([api.metadata(id), api.about(id)]);
    const value = { versions, providers, plugins, fonts, process };
    return { value, text: aboutText(value) };
  },
};

export const instance: Command = {
  summary: `Show an instance's cached projects, its settings and their sources, or about it (the default)`,
  arguments: ['<instance_id>', '[projects|settings|about]'],
  options: JSON_OPTION,
  async run(api, { ids: [id = '', view = 'about'], flags }, io) {
    const show = Object.hasOwn(views, view) ? views[view] : undefined;
    if (!show) throw new CliError(`steward instance: the view is projects, settings or about, not "${view}"`);
    const { value, text } = await show(api, id);
    io.out(flags['json'] ? json(value) : text);
  },
};
