/** The `steward` subcommands of project versions: list them, restore one. */
import { type Command, countOf, json, JSON_OPTION, SCHEMA_OPTION } from './command.js';
import { formatTable } from './table.js';

/** Versions listed when `--limit` is not given. */
const DEFAULT_LIMIT = 20;

export const history: Command = {
  summary: "List a project's versions, newest first",
  arguments: ['<project>'],
  options: JSON_OPTION,
  valueOptions: {
    ...SCHEMA_OPTION,
    limit: `how many versions (default ${DEFAULT_LIMIT}, at most 500)`,
    before: 'versions older than this one',
  },
  async run(api, { ids: [project = ''], flags, values }, io) {
    const page = await api.versions(
      project,
      { limit: countOf('limit', values['limit'], DEFAULT_LIMIT, 500), before: values['before'] },
      values['schema'],
    );
    if (flags['json']) return io.out(json(page));
    const rows = page.versions.map(({ id, time, who, summary }) => [id, time, who, summary]);
    io.out(formatTable(['VERSION', 'TIME', 'WHO', 'SUMMARY'], rows));
    if (page.next) io.out(`Older versions: steward history ${project} --before ${page.next}\n`);
  },
};

export const restore: Command = {
  summary: 'Restore a version of a project as its newest version, styles included',
  arguments: ['<project>', '<version>'],
  options: {
    ...JSON_OPTION,
    force: 'restore even when layers of the version read data files that are gone',
  },
  valueOptions: SCHEMA_OPTION,
  async run(api, { ids: [project = '', version = ''], flags, values }, io) {
    const restored = await api.restore(project, version, flags['force'] === true, values['schema']);
    io.out(flags['json'] ? json(restored) : `Restored version ${version} of ${project} as version ${restored.id}.\n`);
  },
};
