/** `steward import`: a vector layer copied into a PostGIS table, followed to its end (docs/datasources.md). */
import { CliError, type ImportRequest } from './api.js';
import { type Command, json, JSON_OPTION } from './command.js';
import { followJob, jobExitCode } from './job-commands.js';

/** `schema.table`, or a bare table in the public schema. */
function target(text: string): { schema: string; table: string } {
  const parts = text.split('.');
  if (parts.length === 1) return { schema: 'public', table: text };
  const [schema = '', table = ''] = parts;
  if (parts.length > 2 || schema === '' || table === '') {
    throw new CliError(`the target must be SCHEMA.TABLE or TABLE, not "${text}"`);
  }
  return { schema, table };
}

function mode(flags: Record<string, boolean>): ImportRequest['mode'] {
  if (flags['overwrite'] && flags['append']) throw new CliError('give --overwrite or --append, not both');
  if (flags['overwrite']) return 'overwrite';
  return flags['append'] ? 'append' : 'create';
}

export const importCommand: Command = {
  summary: 'Import a vector layer into a PostGIS table of a connection service, with a progress bar',
  arguments: ['<service>', '<schema.table>', '<source>'],
  options: {
    overwrite: 'replace the table when it exists',
    append: 'add the rows to the existing table',
    ...JSON_OPTION,
  },
  valueOptions: {
    layer: 'the source layer (default: the first)',
    crs: 'reproject to this CRS, as EPSG:2154',
  },
  async run(api, { ids: [service = '', table = '', source = ''], flags, values }, io) {
    const body: ImportRequest = {
      service,
      ...target(table),
      source,
      mode: mode(flags),
      ...(values['layer'] !== undefined && { layer: values['layer'] }),
      ...(values['crs'] !== undefined && { crs: values['crs'] }),
    };
    const started = await api.importIntoPostgres(body);
    const ended = await followJob(api, started.id, { ...io, out: (text) => flags['json'] || io.out(text) });
    if (flags['json'] && ended) io.out(json(ended));
    else if (ended?.state === 'succeeded')
      io.out(`${String(ended.result?.['rows'])} rows in ${body.schema}.${body.table}\n`);
    return jobExitCode(ended);
  },
};
