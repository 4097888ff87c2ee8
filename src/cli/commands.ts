/** The `steward` subcommands: each turns API answers into text or JSON on stdout. */
import { setTimeout as sleep } from 'node:timers/promises';

import type { InstanceStats } from '../monitor/protocol.js';
import { audit, roles, tokens, whoami } from './access-commands.js';
import { type LayerTree, type ProjectCheck, type StewardApi, type TreeNode } from './api.js';
import { type AnyCommand, type Command, json, JSON_OPTION, SCHEMA_OPTION } from './command.js';
import { pin, pins, reload, unpin } from './fleet-commands.js';
import { history, restore } from './history-commands.js';
import { importCommand } from './import-commands.js';
import { askEveryInstance, instance, instances } from './instance-commands.js';
import { job, jobs, seed } from './job-commands.js';
import { login, logout } from './login-commands.js';
import { download, publish } from './publish-commands.js';
import { formatTable } from './table.js';

export const WATCH_INTERVAL_MS = 2000;
const CLEAR_SCREEN = '\x1b[H\x1b[2J';

const ps: Command = {
  summary: 'List the QGIS Server instances registered with Steward',
  arguments: [],
  options: JSON_OPTION,
  async run(api, { flags }, io) {
    const servers = await api.instances();
    if (flags['json']) return io.out(json(servers));
    const rows = servers.map(({ id, ip, binded }) => [id, ip, `Binded ${binded} seconds ago`]);
    io.out(formatTable(['INSTANCE ID', 'IP', 'STATUS'], rows));
  },
};

const inspect: Command = {
  summary: 'Print the metadata of an instance as JSON',
  arguments: ['<instance_id>'],
  options: JSON_OPTION,
  async run(api, { ids: [id = ''] }, io) {
    io.out(json(await api.metadata(id)));
  },
};

const logs: Command = {
  summary: 'Print the log of an instance, newest line last',
  arguments: ['<instance_id>'],
  options: JSON_OPTION,
  async run(api, { ids: [id = ''], flags }, io) {
    const { lines } = await api.logs(id);
    io.out(flags['json'] ? json({ lines }) : lines.map((line) => `${line}\n`).join(''));
  },
};

type StatsRow = { id: string } & (InstanceStats | { error: string });

/** Stats of every instance still registered; one that fails to answer gets a row with its error. */
async function statsRows(api: StewardApi): Promise<StatsRow[]> {
  const answers = await askEveryInstance(api, ({ id }) => api.stats(id));
  return answers.map((row) => ('error' in row ? row : { id: row.id, ...row.answer }));
}

function statsTable(rows: StatsRow[]): string {
  const cells = rows.map((row) =>
    'error' in row
      ? [row.id, '-', '-', '-', '-', row.error]
      : [row.id, String(row.count), `${row.duration} ms`, row.service, row.request, row.project],
  );
  return formatTable(['INSTANCE ID', 'COUNT', 'TIME', 'SERVICE', 'REQUEST', 'PROJECT'], cells);
}

const stats: Command = {
  summary: 'Show request statistics of every online instance',
  arguments: [],
  options: { ...JSON_OPTION, watch: `refresh every ${WATCH_INTERVAL_MS / 1000} seconds until interrupted` },
  async run(api, { flags }, io) {
    const render = (rows: StatsRow[]) => (flags['json'] ? json(rows) : statsTable(rows));
    if (!flags['watch']) {
      io.out(render(await statsRows(api)));
      return;
    }
    while (!io.signal.aborted) {
      const text = render(await statsRows(api));
      io.out(io.isTTY ? CLEAR_SCREEN + text : `${text}\n`);
      await sleep(WATCH_INTERVAL_MS, undefined, { signal: io.signal }).catch(() => {});
    }
  },
};

/** One line per project, then one per finding: `project  status` / `  layer  kind  message`. */
function checkText(checks: Record<string, ProjectCheck>): string {
  const rows: string[][] = [];
  for (const [project, result] of Object.entries(checks)) {
    rows.push([project, result.status, '', '']);
    for (const finding of result.findings) rows.push(['', '', finding.kind, finding.message]);
    for (const layer of result.layers) {
      for (const finding of layer.findings) rows.push(['', layer.name, finding.kind, finding.message]);
    }
  }
  return formatTable(['PROJECT', 'STATUS / LAYER', 'KIND', 'FINDING'], rows);
}

const check: Command = {
  summary: 'Check a project, or every project: exits 1 when one is degraded or broken',
  arguments: ['[project]'],
  options: JSON_OPTION,
  valueOptions: SCHEMA_OPTION,
  async run(api, { ids: [project], flags, values }, io) {
    const schema = values['schema'];
    const checks =
      project === undefined ? await api.check(undefined, schema) : { [project]: await api.check(project, schema) };
    io.out(flags['json'] ? json(checks) : checkText(checks));
    return Object.values(checks).every((result) => result.status === 'ok') ? 0 : 1;
  },
};

/** A node and its children, one a line, indented two spaces a level: `[x] name`, groups with what marks them. */
function treeLines(node: TreeNode, depth: number): string[] {
  const marks = [
    node.type === 'group' ? 'group' : '',
    node.short_name ? `WMS name ${node.short_name}` : '',
    node.title ? `title "${node.title}"` : '',
    node.mutually_exclusive ? 'mutually exclusive' : '',
    node.embedded ? 'embedded' : '',
  ].filter(Boolean);
  const line = `${'  '.repeat(depth)}[${node.visible ? 'x' : ' '}] ${node.name}${marks.length ? ` (${marks.join(', ')})` : ''}`;
  return [line, ...(node.children ?? []).flatMap((child) => treeLines(child, depth + 1))];
}

function treeText(tree: LayerTree): string {
  const lines = tree.children.flatMap((node) => treeLines(node, 0));
  if (tree.order) lines.push('', `Drawing order (top first): ${tree.order.join(', ')}`);
  return lines.length > 0 ? `${lines.join('\n')}\n` : 'The project has no layers.\n';
}

const tree: Command = {
  summary: "Print a project's layer tree: [x] for visible, groups with their WMS name and title",
  arguments: ['<project>'],
  options: JSON_OPTION,
  valueOptions: SCHEMA_OPTION,
  async run(api, { ids: [project = ''], flags, values }, io) {
    const answer = await api.tree(project, values['schema']);
    io.out(flags['json'] ? json(answer) : treeText(answer));
  },
};

export const commands: Record<string, AnyCommand> = {
  ps,
  inspect,
  logs,
  stats,
  instances,
  instance,
  reload,
  pin,
  unpin,
  pins,
  check,
  tree,
  jobs,
  job,
  seed,
  history,
  restore,
  publish,
  download,
  import: importCommand,
  login,
  logout,
  whoami,
  tokens,
  roles,
  audit,
};
