import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

import { unzipSync } from 'fflate';

import { ProjectFormatError } from '../qgis/project.js';
import { DEFLATED, DIRECTORY_ENTRY, END_OF_DIRECTORY, LOCAL_HEADER } from './zip-format.js';

const compress = promisify(gzip);

const VERSION = 20;
/** General purpose flag bit 11: the entry's name is UTF-8. */
const UTF8_NAME = 0x0800;
/** gzip's header as zlib writes it (no name, no extra field) and its trailer (CRC-32, size). */
const GZIP_HEADER = 10;
const GZIP_TRAILER = 8;
const MAX_32 = 0xffffffff;

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
  if (content.byteLength > MAX_32) throw new ProjectFormatError(`archive entry ${name} is over 4 GiB`);
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
  if (offset + directorySize > MAX_32) throw new ProjectFormatError('the project archive would be over 4 GiB');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(offset, 16);
  return [...pieces, ...directory, end];
}

/**
 * A zipped QGIS project as QGIS stores it in a .qgz file or the `content` of a `qgis_projects` row:
 * one .qgs entry, possibly beside others (the auxiliary storage .qgd) that are kept as they are.
 */
export class ProjectArchive {
  private constructor(
    private readonly entries: Record<string, Uint8Array>,
    private readonly qgsName: string,
  ) {}

  /** A new archive holding only `<name>.qgs`. */
  static create(name: string, text: string): ProjectArchive {
    const archive = new ProjectArchive({}, `${name}.qgs`);
    archive.content = new TextEncoder().encode(text);
    return archive;
  }

  static open(bytes: Uint8Array): ProjectArchive {
    let entries: Record<string, Uint8Array>;
    try {
      entries = unzipSync(bytes);
    } catch (error) {
      throw new ProjectFormatError(`the project is not a zip archive: ${(error as Error).message}`);
    }
    const qgsName = Object.keys(entries).find((entry) => entry.toLowerCase().endsWith('.qgs'));
    if (qgsName === undefined) throw new ProjectFormatError('the project archive holds no .qgs file');
    return new ProjectArchive(entries, qgsName);
  }

  /** The .qgs entry, XML in UTF-8. */
  get content(): Uint8Array {
    return this.entries[this.qgsName] as Uint8Array;
  }

  set content(content: Uint8Array) {
    this.entries[this.qgsName] = content;
  }

  /**
   * The archive, its entries deflated off the event loop: deflating a project of megabytes takes
   * a tenth of a second or more, during which reads would otherwise wait.
   */
  async bytes(): Promise<Buffer> {
    const entries = await Promise.all(Object.entries(this.entries).map(([name, content]) => pack(name, content)));
    return Buffer.concat(zipOf(entries, new Date()));
  }
}
