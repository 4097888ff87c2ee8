/**
 * The `steward` subcommands that act on every QGIS Server instance at once: reload a project
 * everywhere, pin and unpin projects, list the pinned ones.
 */
import type { InstanceReload } from '../insight/project-fleet.js';
import { type StewardApi } from './api.js';
import { type Command, json, JSON_OPTION, SCHEMA_OPTION } from './command.js';
import { formatTable } from './table.js';

/** The MAP values of the pinned projects, as the instances list their cache. */
export async function pinnedMaps(api: StewardApi): Promise<Set<string>> {
  return new Set((await api.pins()).map(({ map }) => map));
}

export const reload: Command = {
  summary: 'Have every instance load a project again: exits 1 when one failed or refused it',
  arguments: ['<project>'],
  options: JSON_OPTION,
  valueOptions: SCHEMA_OPTION,
  async run(api, { ids: [project = ''], flags, values }, io) {
    const answers = await api.reload(project, values['schema']);
    io.out(flags['json'] ? json(answers) : reloadText(answers));
    return reloadExit(answers);
  },
};

/** The table of what each instance answered to a reload or a pin, or that none is connected. */
function reloadText(answers: InstanceReload[]): string {
  if (answers.length === 0) return 'No instance is connected.\n';
  const rows = answers.map((answer) => [
    answer.instance,
    answer.status,
    answer.project ? String(answer.project.layers) : '-',
    answer.project?.invalid_layers.join(', ') || '-',
    answer.error ?? '',
  ]);
  return formatTable(['INSTANCE ID', 'STATUS', 'LAYERS', 'INVALID LAYERS', 'ERROR'], rows);
}

/** 0 when every instance loaded the project (`pending`: its next request will), else 1. */
function reloadExit(answers: InstanceReload[]): number {
  return answers.every(({ status }) => status === 'reloaded' || status === 'pending') ? 0 : 1;
}

export const pin: Command = {
  summary: 'Pin a project: every instance loads it now and whenever it connects; exits 1 when one could not',
  arguments: ['<project>'],
  options: JSON_OPTION,
  valueOptions: SCHEMA_OPTION,
  async run(api, { ids: [project = ''], flags, values }, io) {
    const answers = await api.pin(project, values['schema']);
    io.out(flags['json'] ? json({ pinned: true, instances: answers }) : `Pinned ${project}.\n${reloadText(answers)}`);
    return reloadExit(answers);
  },
};

export const unpin: Command = {
  summary: 'Unpin a project: the instances keep it cached until QGIS Server drops it',
  arguments: ['<project>'],
  options: JSON_OPTION,
  valueOptions: SCHEMA_OPTION,
  async run(api, { ids: [project = ''], flags, values }, io) {
    await api.unpin(project, values['schema']);
    io.out(flags['json'] ? json({ pinned: false }) : `Unpinned ${project}.\n`);
  },
};

export const pins: Command = {
  summary: 'List the pinned projects of every schema, and what pinned each (the API or STEWARD_PINNED_PROJECTS)',
  arguments: [],
  options: JSON_OPTION,
  async run(api, { flags }, io) {
    const pinned = await api.pins();
    const rows = pinned.map(({ project, schema, source, map }) => [project, schema, source, map]);
    io.out(flags['json'] ? json(pinned) : formatTable(['PROJECT', 'SCHEMA', 'SOURCE', 'MAP'], rows));
  },
};
