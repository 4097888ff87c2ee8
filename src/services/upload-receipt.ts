/**
 * A project upload read as it arrives (docs/publishing.md), on whichever thread reads its body: a
 * lone project file whole, a bundle unpacked as it streams, its project file kept in memory and
 * its data files written straight into a staged folder. What the project says is not looked at
 * here: the thread that took the request parses it.
 */
import { posix } from 'node:path';

import { BadRequest, UnsupportedMediaType } from '../errors.js';
import { type StagedFolder } from '../storage/staged-folder.js';
import { type ZipLimits } from '../storage/zip-entries.js';
import { LOCAL_HEADER } from '../storage/zip-format.js';
import { type EntryOutput, unzipStream } from '../storage/zip-stream.js';
import { isSystemFile } from './bundle-entries.js';

/** An upload read whole: its project file, and the data files beside it in the staged folder. */
export interface Received {
  /** The project file's path in the bundle; none for a lone project file. */
  file?: string;
  /** The project file's bytes (a .qgs, or a .qgz to open). */
  bytes: Uint8Array;
  /** The data files written to the staged folder, by their path in the bundle. */
  names: string[];
}

const PROJECT_FILE = /\.(qgs|qgz)$/i;
/** Bytes of an upload read to tell a zip from a project file. */
const SNIFF_BYTES = 64;

/** The body's chunks until they hold `length` bytes or it ends, as one buffer of its own. */
async function firstBytes(chunks: AsyncIterator<Buffer>, length: number): Promise<Buffer> {
  const taken: Buffer[] = [];
  let bytes = 0;
  while (bytes < length) {
    const next = await chunks.next();
    if (next.done === true) break;
    // Lent until the next is asked for (zip-stream.ts): copied.
    taken.push(Buffer.from(next.value));
    bytes += next.value.length;
  }
  return Buffer.concat(taken);
}

/** `start`, then the rest of the chunks. */
async function* withStart(start: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield start;
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
}

function isZip(start: Buffer): boolean {
  return start.length >= 4 && start.readUInt32LE(0) === LOCAL_HEADER;
}

function severalProjects(projects: string[]): BadRequest {
  return new BadRequest(`the archive holds several QGIS projects (${projects.join(', ')}); a bundle holds one`);
}

/** A lone `.qgs` (or whatever is not a zip): 415 unless it starts as XML. */
async function receiveProject(start: Buffer, all: AsyncIterable<Buffer>): Promise<Received> {
  if (!/^(\uFEFF)?\s*</.test(start.subarray(0, SNIFF_BYTES).toString('utf8')))
    throw new UnsupportedMediaType('the upload is neither a QGIS project (.qgs, .qgz) nor a zip bundle of one');
  const chunks: Buffer[] = [];
  for await (const chunk of all) chunks.push(Buffer.from(chunk));
  return { bytes: Buffer.concat(chunks), names: [] };
}

/** A bundle: its one project file read into memory, its other files written to `staging`. */
async function receiveBundle(all: AsyncIterable<Buffer>, staging: StagedFolder, limits: ZipLimits): Promise<Received> {
  const projects: string[] = [];
  const place = async (name: string): Promise<EntryOutput> => {
    // QGIS's backups (`<name>.qgs~`) and the systems' own files are not data.
    if (isSystemFile(name) || name.endsWith('~')) return { to: 'nowhere' };
    if (PROJECT_FILE.test(name)) {
      projects.push(name);
      if (projects.length > 1) throw severalProjects(projects);
      return { to: 'memory' };
    }
    return { to: 'file', path: await staging.pathFor(name) };
  };
  const kept = await unzipStream(all, limits, place);
  if (projects.length === 0) throw new BadRequest('the archive holds no QGIS project (.qgs or .qgz)');
  const file = projects[0] as string;
  // QGIS's auxiliary storage (`<name>.qgd`) is not data either.
  await staging.remove(`${file.replace(PROJECT_FILE, '')}.qgd`);
  return { file, bytes: kept.get(file) ?? Buffer.alloc(0), names: staging.names() };
}

/**
 * Reads the upload `chunks` bring (each lent until the next is asked for): a lone project file, or
 * a bundle whose data files go to `staging`, held to `limits`. On failure the files written stay
 * for the caller to discard with the staged folder.
 */
export async function receiveUpload(
  chunks: AsyncIterable<Buffer>,
  staging: StagedFolder,
  limits: ZipLimits,
): Promise<Received> {
  const rest = chunks[Symbol.asyncIterator]();
  const start = await firstBytes(rest, SNIFF_BYTES);
  const all = withStart(start, rest);
  return isZip(start) ? receiveBundle(all, staging, limits) : receiveProject(start, all);
}

/** The folder of the project file in the bundle, `.` at its root or for a lone project file. */
export function projectFolder(received: Received): string {
  return received.file === undefined ? '.' : posix.dirname(received.file);
}
