/**
 * Writes zip archives (PKWARE's APPNOTE.TXT, without ZIP64): the project archives QGIS keeps
 * (`.qgz`) and the bundles of a project with its data. Entries are deflated on zlib's thread pool.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

import { DocumentFormatError } from '../errors.js';
import { DEFLATED, DIRECTORY_ENTRY, END_OF_DIRECTORY, LOCAL_HEADER } from './zip-format.js';

const compress = promisify(gzip);

const VERSION = 20;
/** General purpose flag bit 11: the entry's name is UTF-8. */
const UTF8_NAME = 0x0800;
/** gzip's header as zlib writes it (no name, no extra field) and its trailer (CRC-32, size). */
const GZIP_HEADER = 10;
const GZIP_TRAILER = 8;
const MAX_32 = 0xffffffff;
const MAX_ENTRIES = 0xffff;

/** An entry compressed and ready to be written. */
interface PackedEntry {
  name: Buffer;
  crc: number;
  size: number;
  data: Buffer;
}

/**
 * Deflates an entry on zlib's thread pool: gzip's output is the raw deflate stream zip wants with
 * the CRC-32 in its trailer, so nothing of the entry's size is computed on the event loop.
 */
async function pack(name: string, content: Uint8Array): Promise<PackedEntry> {
  if (content.byteLength > MAX_32) throw new DocumentFormatError(`archive entry ${name} is over 4 GiB`);
  const gzipped = await compress(content);
  return {
    name: Buffer.from(name, 'utf8'),
    crc: gzipped.readUInt32LE(gzipped.length - GZIP_TRAILER),
    size: content.byteLength,
    data: gzipped.subarray(GZIP_HEADER, gzipped.length - GZIP_TRAILER),
  };
}

/** MS-DOS time and date, as zip headers hold them. */
function dosTime(date: Date): { time: number; date: number } {
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
    date: ((date.getFullYear() - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

/** The fields local headers and directory entries share, from "version needed" to the name's length. */
function commonFields(entry: PackedEntry, when: { time: number; date: number }): Buffer {
  const fields = Buffer.alloc(26);
  fields.writeUInt16LE(VERSION, 0);
  fields.writeUInt16LE(UTF8_NAME, 2);
  fields.writeUInt16LE(DEFLATED, 4);
  fields.writeUInt16LE(when.time, 6);
  fields.writeUInt16LE(when.date, 8);
  fields.writeUInt32LE(entry.crc, 10);
  fields.writeUInt32LE(entry.data.length, 14);
  fields.writeUInt32LE(entry.size, 18);
  fields.writeUInt16LE(entry.name.length, 22);
  return fields;
}

/** A zip archive of the entries, in the order given. */
function zipOf(entries: PackedEntry[], now: Date): Buffer[] {
  if (entries.length > MAX_ENTRIES) throw new DocumentFormatError(`an archive holds at most ${MAX_ENTRIES} entries`);
  const when = dosTime(now);
  const pieces: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const fields = commonFields(entry, when);
    const local = Buffer.alloc(4);
    local.writeUInt32LE(LOCAL_HEADER);
    pieces.push(local, fields, entry.name, entry.data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(DIRECTORY_ENTRY, 0);
    central.writeUInt16LE(VERSION, 4);
    fields.copy(central, 6);
    central.writeUInt32LE(offset, 42);
    directory.push(central, entry.name);
    offset += 30 + entry.name.length + entry.data.length;
  }
  const directorySize = directory.reduce((sum, piece) => sum + piece.length, 0);
  if (offset + directorySize > MAX_32) throw new DocumentFormatError('the archive would be over 4 GiB');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(offset, 16);
  return [...pieces, ...directory, end];
}

/**
 * A zip archive of `entries` (name, content), in the order given, their contents deflated off the
 * event loop: deflating megabytes takes a tenth of a second or more, during which reads would wait.
 */
export async function zipArchive(entries: ReadonlyArray<readonly [string, Uint8Array]>): Promise<Buffer> {
  const packed = await Promise.all(entries.map(([name, content]) => pack(name, content)));
  return Buffer.concat(zipOf(packed, new Date()));
}
