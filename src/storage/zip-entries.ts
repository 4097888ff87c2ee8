/**
 * Steward's one zip reader, for the archives clients send (style packages, project bundles) and
 * the projects QGIS stores zipped (.qgz files, `qgis_projects` rows), unpacked within limits. The
 * central directory is read here rather than trusted to an unzip library: each entry is inflated
 * with zlib's `maxOutputLength` set to the size it declares, so an archive whose entries claim
 * small sizes and unpack to gigabytes stops at the first byte past its claim, and the declared
 * sizes together must fit the limit before anything is inflated. An entry that unpacks to another
 * size than it declares, or to other bytes (its CRC-32), and a name that would leave the folder it
 * is unpacked in (absolute, `..`, backslashes, drive letters, control characters) refuse the archive.
 */
import { crc32, inflateRawSync } from 'node:zlib';

import { BadRequest, type StewardError } from '../errors.js';
import { DEFLATED, DIRECTORY_ENTRY, ENCRYPTED, END_OF_DIRECTORY, LOCAL_HEADER, STORED } from './zip-format.js';

export interface ZipLimits {
  /** Most entries (files and folders) an archive may hold. */
  entries: number;
  /** Most bytes its files may unpack to, together. */
  bytes: number;
}

const END_RECORD_SIZE = 22;
const MAX_COMMENT = 0xffff;
/** The last bytes of an archive that hold its end of central directory record, whatever its comment. */
export const END_SEARCH_BYTES = END_RECORD_SIZE + MAX_COMMENT;
/** Bytes of a local header before its name and extra field. */
export const LOCAL_HEADER_SIZE = 30;

export interface DirectoryEntry {
  name: string;
  flags: number;
  crc: number;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Makes the error the caller answers with from the reason an archive is refused. */
export type ZipRefusal = (reason: string) => StewardError;

/** A client's archive: 400. */
export const CLIENT_ARCHIVE: ZipRefusal = (reason) =>
  new BadRequest(`the package is not a zip archive Steward unpacks: ${reason}`);

/** Why an archive is refused, before its caller's ZipRefusal makes its error of it. */
export class Refused extends Error {}

export function refuse(reason: string): never {
  throw new Refused(reason);
}

/** Where the central directory is and how many entries it holds, from the end of the archive (or its last bytes). */
export interface EndRecord {
  count: number;
  offset: number;
  size: number;
}

/** The end of central directory record in `bytes`, the archive or its last `END_SEARCH_BYTES` bytes. */
export function endRecord(bytes: Buffer): EndRecord {
  const lowest = Math.max(0, bytes.length - END_SEARCH_BYTES);
  for (let at = bytes.length - END_RECORD_SIZE; at >= lowest; at--) {
    if (bytes.readUInt32LE(at) === END_OF_DIRECTORY) {
      const end = {
        count: bytes.readUInt16LE(at + 10),
        size: bytes.readUInt32LE(at + 12),
        offset: bytes.readUInt32LE(at + 16),
      };
      if (end.count === 0xffff || end.offset === 0xffffffff) refuse('ZIP64 archives are not taken');
      return end;
    }
  }
  return refuse('it has no end of central directory record');
}

/** Refuses a name that would not stay inside the folder the archive is unpacked in. */
export function checkEntryName(name: string): void {
  const unsafe =
    name === '' ||
    name.startsWith('/') ||
    name.includes('\\') ||
    /^[a-z]:/i.test(name) ||
    /[\u0000-\u001f\u007f]/.test(name) ||
    name
      .replace(/\/$/, '')
      .split('/')
      .some((segment) => segment === '' || segment === '.' || segment === '..');
  if (unsafe) refuse(`entry ${JSON.stringify(name)} would leave the archive's folder`);
}

/** The `count` central directory entries from `at` in `bytes`, each name checked. */
export function directoryEntries(bytes: Buffer, at: number, count: number, limits: ZipLimits): DirectoryEntry[] {
  if (count > limits.entries) refuse(`it holds ${count} entries, more than ${limits.entries}`);
  const entries: DirectoryEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (bytes.readUInt32LE(at) !== DIRECTORY_ENTRY) refuse('its central directory is damaged');
    const nameLength = bytes.readUInt16LE(at + 28);
    const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    checkEntryName(name);
    entries.push({
      name,
      flags: bytes.readUInt16LE(at + 8),
      method: bytes.readUInt16LE(at + 10),
      crc: bytes.readUInt32LE(at + 16),
      compressedSize: bytes.readUInt32LE(at + 20),
      size: bytes.readUInt32LE(at + 24),
      localOffset: bytes.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
  return entries;
}

function directory(bytes: Buffer, limits: ZipLimits): DirectoryEntry[] {
  const end = endRecord(bytes);
  return directoryEntries(bytes, end.offset, end.count, limits);
}

/** Where the entry's data begins, from its local header at `at` in `bytes`; refused when encrypted. */
function localDataStart(bytes: Buffer, at: number, entry: DirectoryEntry): number {
  if (bytes.readUInt32LE(at) !== LOCAL_HEADER) refuse(`entry "${entry.name}" has no local header`);
  if (entry.flags & ENCRYPTED) refuse(`entry "${entry.name}" is encrypted`);
  return at + LOCAL_HEADER_SIZE + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
}

function unpack(bytes: Buffer, entry: DirectoryEntry): Buffer {
  const start = localDataStart(bytes, entry.localOffset, entry);
  const compressed = bytes.subarray(start, start + entry.compressedSize);
  if (compressed.length !== entry.compressedSize) refuse(`entry "${entry.name}" is cut short`);
  let data: Buffer;
  if (entry.method === STORED) data = compressed;
  else if (entry.method !== DEFLATED) refuse(`entry "${entry.name}" uses compression method ${entry.method}`);
  else {
    try {
      data = inflateRawSync(compressed, { maxOutputLength: Math.max(1, entry.size) });
    } catch {
      refuse(`entry "${entry.name}" does not unpack to the ${entry.size} bytes it declares`);
    }
  }
  if (data.length !== entry.size)
    refuse(`entry "${entry.name}" does not unpack to the ${entry.size} bytes it declares`);
  if (crc32(data) !== entry.crc) refuse(`entry "${entry.name}" does not unpack to the bytes it declares (CRC-32)`);
  return data;
}

/** What to throw for `error` met reading an archive: `refusal`'s error when the archive is at fault. */
export function archiveError(error: unknown, refusal: ZipRefusal): unknown {
  if (error instanceof Refused) return refusal(error.message);
  if (error instanceof RangeError) return refusal('it is cut short');
  return error;
}

function read<T>(reading: () => T, refusal: ZipRefusal): T {
  try {
    return reading();
  } catch (error) {
    throw archiveError(error, refusal);
  }
}

/** The archive's files (folders left out), their declared sizes together within the limit. */
export function filesWithin(entries: DirectoryEntry[], limits: ZipLimits): DirectoryEntry[] {
  const files = entries.filter((entry) => !entry.name.endsWith('/'));
  const total = files.reduce((sum, entry) => sum + entry.size, 0);
  if (total > limits.bytes) refuse(`its files unpack to ${total} bytes, more than ${limits.bytes}`);
  const names = new Set<string>();
  for (const { name } of files) {
    if (names.has(name)) refuse(`it holds "${name}" twice`);
    names.add(name);
  }
  return files;
}

function files(bytes: Buffer, limits: ZipLimits): DirectoryEntry[] {
  return filesWithin(directory(bytes, limits), limits);
}

/**
 * The bytes each of the archive's files says it unpacks to, read from its central directory
 * without inflating anything (unzipEntries holds each file to its word); BadRequest as unzipEntries.
 */
export function declaredSizes(
  bytes: Buffer,
  limits: ZipLimits,
  refusal: ZipRefusal = CLIENT_ARCHIVE,
): Map<string, number> {
  return read(() => new Map(files(bytes, limits).map((entry) => [entry.name, entry.size])), refusal);
}

/**
 * The archive's files by name, in its order (folders left out); for anything unsafe, damaged or
 * beyond the limits, what `refusal` makes of the reason (BadRequest by default).
 */
export function unzipEntries(
  bytes: Buffer,
  limits: ZipLimits,
  refusal: ZipRefusal = CLIENT_ARCHIVE,
): Map<string, Buffer> {
  return read(() => {
    const unpacked = new Map<string, Buffer>();
    for (const entry of files(bytes, limits)) {
      unpacked.set(entry.name, unpack(bytes, entry));
    }
    return unpacked;
  }, refusal);
}
