/**
 * Writes zip archives (PKWARE's APPNOTE.TXT, without ZIP64): the project archives QGIS keeps
 * (`.qgz`) and the bundles of a project with its data. Entries given whole are deflated on zlib's
 * thread pool; files are streamed from the disk as they are (stored, as `zip -0` stores them).
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { crc32, gzip } from 'node:zlib';

import { DocumentFormatError } from '../errors.js';
import {
  DATA_DESCRIPTOR,
  DEFLATED,
  DESCRIPTOR_BYTES,
  DESCRIPTOR_FOLLOWS,
  DIRECTORY_ENTRY,
  END_OF_DIRECTORY,
  LOCAL_HEADER,
  STORED,
} from './zip-format.js';

const compress = promisify(gzip);

const VERSION = 20;
/** General purpose flag bit 11: the entry's name is UTF-8. */
const UTF8_NAME = 0x0800;
/** Bytes of a local header, a directory entry and the end record, before names. */
const LOCAL_BYTES = 30;
const DIRECTORY_BYTES = 46;
const END_BYTES = 22;
/** Bytes read from a streamed file at a time: each is a CRC-32 on the event loop. */
const READ_CHUNK = 1024 * 1024;
/** gzip's header as zlib writes it (no name, no extra field) and its trailer (CRC-32, size). */
const GZIP_HEADER = 10;
const GZIP_TRAILER = 8;
const MAX_32 = 0xffffffff;
const MAX_ENTRIES = 0xffff;

/** An entry ready to be written: its bytes, or its CRC-32 and sizes once they have been streamed. */
interface PackedEntry {
  name: Buffer;
  method: number;
  flags: number;
  crc: number;
  size: number;
  compressedSize: number;
}

interface WholeEntry extends PackedEntry {
  data: Buffer;
}

/**
 * Deflates an entry on zlib's thread pool: gzip's output is the raw deflate stream zip wants with
 * the CRC-32 in its trailer, so nothing of the entry's size is computed on the event loop.
 */
async function pack(name: string, content: Uint8Array): Promise<WholeEntry> {
  if (content.byteLength > MAX_32) throw new DocumentFormatError(`archive entry ${name} is over 4 GiB`);
  const gzipped = await compress(content);
  const data = gzipped.subarray(GZIP_HEADER, gzipped.length - GZIP_TRAILER);
  return {
    name: Buffer.from(name, 'utf8'),
    method: DEFLATED,
    flags: UTF8_NAME,
    crc: gzipped.readUInt32LE(gzipped.length - GZIP_TRAILER),
    size: content.byteLength,
    compressedSize: data.length,
    data,
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
  fields.writeUInt16LE(entry.flags, 2);
  fields.writeUInt16LE(entry.method, 4);
  fields.writeUInt16LE(when.time, 6);
  fields.writeUInt16LE(when.date, 8);
  fields.writeUInt32LE(entry.crc, 10);
  fields.writeUInt32LE(entry.compressedSize, 14);
  fields.writeUInt32LE(entry.size, 18);
  fields.writeUInt16LE(entry.name.length, 22);
  return fields;
}

function localHeader(entry: PackedEntry, when: { time: number; date: number }): Buffer[] {
  const signature = Buffer.alloc(4);
  signature.writeUInt32LE(LOCAL_HEADER);
  return [signature, commonFields(entry, when), entry.name];
}

function directoryEntry(entry: PackedEntry, when: { time: number; date: number }, offset: number): Buffer[] {
  const central = Buffer.alloc(DIRECTORY_BYTES);
  central.writeUInt32LE(DIRECTORY_ENTRY, 0);
  central.writeUInt16LE(VERSION, 4);
  commonFields(entry, when).copy(central, 6);
  central.writeUInt32LE(offset, 42);
  return [central, entry.name];
}

/** Refuses an archive the format without ZIP64 cannot hold. */
function checkBounds(entries: number, bytes: number): void {
  if (entries > MAX_ENTRIES) throw new DocumentFormatError(`an archive holds at most ${MAX_ENTRIES} entries`);
  if (bytes > MAX_32) throw new DocumentFormatError('the archive would be over 4 GiB');
}

function endOfDirectory(entries: number, directorySize: number, offset: number): Buffer {
  checkBounds(entries, offset + directorySize);
  const end = Buffer.alloc(END_BYTES);
  end.writeUInt32LE(END_OF_DIRECTORY, 0);
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(offset, 16);
  return end;
}

/** A zip archive of the entries, in the order given. */
function zipOf(entries: WholeEntry[], now: Date): Buffer[] {
  const when = dosTime(now);
  const pieces: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    pieces.push(...localHeader(entry, when), entry.data);
    directory.push(...directoryEntry(entry, when, offset));
    offset += LOCAL_BYTES + entry.name.length + entry.data.length;
  }
  const directorySize = directory.reduce((sum, piece) => sum + piece.length, 0);
  return [...pieces, ...directory, endOfDirectory(entries.length, directorySize, offset)];
}

/**
 * A zip archive of `entries` (name, content), in the order given, their contents deflated off the
 * event loop: deflating megabytes takes a tenth of a second or more, during which reads would wait.
 */
export async function zipArchive(entries: ReadonlyArray<readonly [string, Uint8Array]>): Promise<Buffer> {
  const packed = await Promise.all(entries.map(([name, content]) => pack(name, content)));
  return Buffer.concat(zipOf(packed, new Date()));
}

/** A file of the disk, streamed into an archive under `name`; `size` is what it holds when listed. */
export interface StreamedFile {
  name: string;
  path: string;
  size: number;
}

/** A zip archive being read from the disk as it is sent, and the bytes it will have. */
export interface StreamedZip {
  length: number;
  stream: Readable;
}

/** A stored entry's local header, its bytes read from the disk, then its CRC-32 and sizes; its directory entry last. */
async function* storedEntry(
  file: StreamedFile,
  when: { time: number; date: number },
  entry: PackedEntry,
): AsyncGenerator<Buffer> {
  yield* localHeader(entry, when);
  let crc = 0;
  let size = 0;
  for await (const chunk of createReadStream(file.path, { highWaterMark: READ_CHUNK }) as AsyncIterable<Buffer>) {
    crc = crc32(chunk, crc);
    size += chunk.length;
    if (size > file.size) break;
    yield chunk;
  }
  if (size !== file.size) throw new DocumentFormatError(`${file.path} changed while it was sent`);
  const descriptor = Buffer.alloc(DESCRIPTOR_BYTES);
  descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
  descriptor.writeUInt32LE(crc >>> 0, 4);
  descriptor.writeUInt32LE(size, 8);
  descriptor.writeUInt32LE(size, 12);
  entry.crc = crc >>> 0;
  entry.size = size;
  entry.compressedSize = size;
  yield descriptor;
}

async function* streamedPieces(first: WholeEntry, files: readonly StreamedFile[], now: Date): AsyncGenerator<Buffer> {
  const when = dosTime(now);
  yield* localHeader(first, when);
  yield first.data;
  const directory = directoryEntry(first, when, 0);
  let offset = LOCAL_BYTES + first.name.length + first.data.length;
  for (const file of files) {
    const entry: PackedEntry = {
      name: Buffer.from(file.name, 'utf8'),
      method: STORED,
      flags: UTF8_NAME | DESCRIPTOR_FOLLOWS,
      crc: 0,
      size: 0,
      compressedSize: 0,
    };
    yield* storedEntry(file, when, entry);
    directory.push(...directoryEntry(entry, when, offset));
    offset += LOCAL_BYTES + entry.name.length + entry.size + DESCRIPTOR_BYTES;
  }
  yield* directory;
  yield endOfDirectory(
    1 + files.length,
    directory.reduce((sum, piece) => sum + piece.length, 0),
    offset,
  );
}

/**
 * A zip archive of `first` (name, content), deflated, then of `files`, stored and read from the
 * disk as the archive is read (the first entry's local header carries its CRC-32; the files' come
 * after their bytes): the memory it takes does not grow with the files. Its length is known
 * before; a file whose size changed meanwhile fails the stream.
 */
export async function streamedZip(
  first: readonly [string, Uint8Array],
  files: readonly StreamedFile[],
): Promise<StreamedZip> {
  const packed = await pack(...first);
  const names = files.map((file) => Buffer.byteLength(file.name, 'utf8'));
  const fileBytes = files.reduce(
    (sum, file, index) => sum + LOCAL_BYTES + DESCRIPTOR_BYTES + DIRECTORY_BYTES + 2 * (names[index] ?? 0) + file.size,
    0,
  );
  const length = LOCAL_BYTES + DIRECTORY_BYTES + 2 * packed.name.length + packed.data.length + fileBytes + END_BYTES;
  checkBounds(1 + files.length, length);
  return { length, stream: Readable.from(streamedPieces(packed, files, new Date()), { objectMode: false }) };
}
