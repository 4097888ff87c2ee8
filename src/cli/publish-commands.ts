/** The `steward` subcommands that take projects in and out as QGIS Desktop has them (docs/publishing.md). */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';

import { streamedZip } from '../storage/zip-writer.js';
import { CliError, type Published } from './api.js';
import { type Command, json, JSON_OPTION, SCHEMA_OPTION } from './command.js';
import { formatTable } from './table.js';
import { transferProgress } from './transfer-progress.js';

const PROJECT_FILE = /\.(qgs|qgz)$/i;

/** Every file below `folder`, by its path relative to it with `/` separators. */
async function filesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** Bytes read from the disk at a time, each counted as sent once the connection takes it. */
const READ_CHUNK = 1024 * 1024;

/** What to upload for FILE, read from the disk as it is sent, and the project's default name. */
interface UploadSource {
  body: AsyncIterable<Uint8Array>;
  length: number;
  name: string;
}

/**
 * A .qgs, .qgz or .zip as it is, a folder as a bundle: the project file deflated, the data files
 * stored as they are read, so that no file is held in memory whatever its size.
 */
async function upload(file: string): Promise<UploadSource> {
  const info = await stat(file).catch(() => undefined);
  if (!info) throw new CliError(`${file} does not exist`);
  if (!info.isDirectory()) {
    if (!/\.(qgs|qgz|zip)$/i.test(file)) throw new CliError(`${file} is not a .qgs, .qgz, .zip or folder`);
    const body = createReadStream(file, { highWaterMark: READ_CHUNK }) as AsyncIterable<Buffer>;
    return { body, length: info.size, name: basename(file, extname(file)) };
  }
  const files = await filesBelow(file);
  const projects = files.filter((name) => PROJECT_FILE.test(name));
  if (projects.length !== 1) {
    throw new CliError(
      projects.length === 0
        ? `${file} holds no QGIS project (.qgs or .qgz)`
        : `${file} holds several QGIS projects (${projects.join(', ')}): give one folder a project`,
    );
  }
  const project = projects[0] ?? '';
  const path = (name: string): string => join(file, ...name.split('/'));
  const data = await Promise.all(
    files
      .filter((name) => name !== project)
      .map(async (name) => ({ name, path: path(name), size: (await stat(path(name))).size })),
  );
  const bundle = await streamedZip([project, await readFile(path(project))], data);
  return { body: bundle.stream, length: bundle.length, name: basename(project, extname(project)) };
}

/**
 * Writes the bytes to `output` as they arrive, through a hidden file beside it renamed once whole,
 * so that an interrupted download leaves no partial archive; the bytes written.
 */
async function writeStreamed(
  body: AsyncIterable<Uint8Array>,
  output: string,
  written: (bytes: number) => void,
): Promise<number> {
  const partial = join(dirname(output), `.${basename(output)}.${randomUUID()}.part`);
  let bytes = 0;
  const counted = async function* (): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      bytes += chunk.byteLength;
      written(bytes);
      yield chunk;
    }
  };
  try {
    await pipeline(counted(), createWriteStream(partial, { flags: 'wx' }));
    await rename(partial, output);
    return bytes;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

function publishedText(project: string, answer: Published): string {
  const rows = answer.check.layers.map(({ name, status, findings }) => [
    name,
    status,
    findings.map((finding) => finding.message).join('; '),
  ]);
  const lines = [
    `${answer.created ? 'Published' : 'Replaced'} project ${project} (${answer.check.status}).`,
    ...(answer.data_dir ? [`Data files (${answer.data_files.length}) in ${answer.data_dir}.`] : []),
  ];
  return `${lines.join('\n')}\n${rows.length > 0 ? formatTable(['LAYER', 'STATUS', 'FINDINGS'], rows) : ''}`;
}

export const publish: Command = {
  summary: 'Publish a QGIS project: a .qgs, a .qgz, a zip bundle, or a folder holding one project and its data',
  arguments: ['<file>'],
  options: {
    ...JSON_OPTION,
    replace: 'replace the project when it exists',
    'allow-broken': 'store the project even when layers are broken',
  },
  valueOptions: { ...SCHEMA_OPTION, project: "the project's name (default: the project file's name)" },
  async run(api, { ids: [file = ''], flags, values }, io) {
    const { body, length, name } = await upload(file);
    const project = values['project'] ?? name;
    const progress = transferProgress(io, `Uploading to ${project}`, length);
    const options = {
      replace: flags['replace'] === true,
      allowBroken: flags['allow-broken'] === true,
      schema: values['schema'],
    };
    const answer = await api
      .publish(project, { body, length, sent: (sent) => progress.update(sent) }, options)
      .finally(() => progress.end());
    io.out(flags['json'] ? json(answer) : publishedText(project, answer));
    return answer.check.status === 'ok' ? undefined : 1;
  },
};

export const download: Command = {
  summary: 'Download a project as a .qgz, or with --data a zip of it and its data files',
  arguments: ['<project>'],
  options: { data: 'a zip of the project and the data files of its layers, paths made relative' },
  valueOptions: { ...SCHEMA_OPTION, output: 'the file to write (default: <project>.qgz or <project>.zip)' },
  async run(api, { ids: [project = ''], flags, values }, io) {
    const data = flags['data'] === true;
    const download = await api.download(project, data, values['schema']);
    const output = values['output'] ?? `${project}.${data ? 'zip' : 'qgz'}`;
    const progress = transferProgress(io, `Downloading ${project}`, download.length);
    const bytes = await writeStreamed(download.body, output, (done) => progress.update(done)).finally(() =>
      progress.end(),
    );
    io.out(`Wrote ${output} (${bytes} bytes).\n`);
  },
};
