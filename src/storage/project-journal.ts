/**
 * The journal of a project file: what makes a write of a large project durable without flushing the
 * whole file. The project file's version at the last full, flushed write is kept as the checkpoint
 * (a hard link, so it costs no copy); each later write appends to the journal, and flushes, a
 * record of the new content as a delta against the version before it, then replaces the project
 * file without waiting for the disk. After a power cut the checkpoint and the records, applied in
 * turn, rebuild what the project file lost. Layout and recovery: docs/storage.md.
 */
import { type BigIntStats } from 'node:fs';
import { type FileHandle, open, readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

import { flushToDisk, linkOver, writeFileAtomic, writePieces } from './atomic-file.js';
import { applyDelta, decodeOps, DeltaBase, type DeltaOp, encodeOps } from './content-delta.js';
import { fileStats, fileVersion } from './file-version.js';
import { contentBytes } from './project-store.js';

const MAGIC = Buffer.from('SWJRNL01');
/** The journal grows to at most the project file's size, or this when the file is smaller. */
const MIN_JOURNAL_ROOM = 1024 * 1024;
/** Records a journal takes: a recovery applies them all, each a copy of the whole content. */
const MAX_RECORDS = 128;
/** The fixed fields of a record's body: modification time, size, count of operations. */
const RECORD_HEAD = 20;

/** The checkpoint and journal files beside a project file. */
export function journalPaths(projectPath: string): { checkpoint: string; journal: string } {
  const dir = dirname(projectPath);
  const name = basename(projectPath);
  return { checkpoint: join(dir, `.${name}.checkpoint`), journal: join(dir, `.${name}.journal`) };
}

/** One write of the project file: its content as a delta against the write before, and its modification time (seconds). */
interface JournalRecord {
  modified: number;
  size: number;
  ops: readonly DeltaOp[];
}

function encodeHeader(checkpointVersion: string): Buffer {
  const version = Buffer.from(checkpointVersion);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(version.byteLength);
  return Buffer.concat([MAGIC, length, version]);
}

/** A record's bytes: its body's length and CRC-32, then the body, new bytes not copied. */
function encodeRecord(record: JournalRecord): Buffer[] {
  const head = Buffer.alloc(RECORD_HEAD);
  head.writeDoubleLE(record.modified, 0);
  head.writeDoubleLE(record.size, 8);
  head.writeUInt32LE(record.ops.length, 16);
  const body: Buffer[] = [head, ...encodeOps(record.ops)];
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(contentBytes(body), 0);
  prefix.writeUInt32LE(
    body.reduce((crc, piece) => crc32(piece, crc), 0),
    4,
  );
  return [prefix, ...body];
}

function decodeBody(body: Buffer): JournalRecord {
  const ops = decodeOps(body, RECORD_HEAD, body.readUInt32LE(16));
  return { modified: body.readDoubleLE(0), size: body.readDoubleLE(8), ops };
}

/**
 * Whether the record at `at`, which fails its check, is the end a crash left rather than damage.
 * Each record was flushed before the next was appended, so only the last can be torn: cut short
 * (its length runs past the end of the journal), or followed by nothing but zeros where the file
 * system kept the journal's new length and not all of its bytes (a zeroed length, too, ends there).
 */
function isTornTail(bytes: Buffer, at: number, length: number): boolean {
  const end = at + 8 + length;
  return end > bytes.byteLength || bytes.subarray(end).every((byte) => byte === 0);
}

/**
 * The journal's checkpoint version and its complete records. A record cut short by a crash ends
 * them, as do zeros where a crash left the journal longer than what was written to it; throws when
 * the journal has no header or a record before its last fails its check.
 */
function decodeJournal(path: string, bytes: Buffer): { checkpointVersion: string; records: JournalRecord[] } {
  // Written whole and renamed into place, a journal always starts with its header: this one is damaged.
  if (bytes.byteLength < MAGIC.byteLength + 4 || !bytes.subarray(0, MAGIC.byteLength).equals(MAGIC))
    throw new Error(`${path} does not start with a journal's header`);
  const versionEnd = MAGIC.byteLength + 4 + bytes.readUInt32LE(MAGIC.byteLength);
  const checkpointVersion = bytes.subarray(MAGIC.byteLength + 4, versionEnd).toString();
  const records: JournalRecord[] = [];
  for (let at = versionEnd; at + 8 <= bytes.byteLength;) {
    const length = bytes.readUInt32LE(at);
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (length < RECORD_HEAD || body.byteLength !== length || crc32(body) !== bytes.readUInt32LE(at + 4)) {
      if (isTornTail(bytes, at, length)) break;
      throw new Error(`${path}: record ${records.length + 1} (at byte ${at}) fails its check and is not the last`);
    }
    records.push(decodeBody(body));
    at += 8 + body.byteLength;
  }
  return { checkpointVersion, records };
}

/** Opens the journal with `flags`, lets `work` write to it, and flushes what it wrote. */
async function writeDurably(path: string, flags: string, work: (handle: FileHandle) => Promise<void>): Promise<void> {
  const handle = await open(path, flags);
  try {
    await work(handle);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

export class ProjectJournal {
  private usable = true;
  private records = 0;

  private constructor(
    private readonly projectPath: string,
    /** The project file's content as this process last wrote it. */
    private base: DeltaBase,
    private readonly checkpointVersion: string,
    private journalLength: number,
    /** The journal's version as this process last wrote it: another process changes it. */
    private journalVersion: string | undefined,
  ) {}

  /**
   * Starts a journal whose checkpoint is the project file as it is now, which `pieces` wrote and
   * which is on the disk; undefined when the file system has no hard links.
   */
  static async begin(projectPath: string, pieces: readonly Uint8Array[]): Promise<ProjectJournal | undefined> {
    const { checkpoint, journal } = journalPaths(projectPath);
    if (!(await linkOver(projectPath, checkpoint))) return undefined;
    const checkpointVersion = fileVersion(checkpoint);
    if (checkpointVersion === undefined) return undefined;
    const header = encodeHeader(checkpointVersion);
    // Flushing the journal's folder also makes the checkpoint's new name durable.
    await writeFileAtomic(journal, header);
    return new ProjectJournal(
      projectPath,
      DeltaBase.of(pieces),
      checkpointVersion,
      header.byteLength,
      fileVersion(journal),
    );
  }

  /** Whether a write can be recorded: checkpoint and journal are as this process left them, with room. */
  accepts(): boolean {
    const { checkpoint, journal } = journalPaths(this.projectPath);
    return (
      this.usable &&
      this.records < MAX_RECORDS &&
      this.journalLength < Math.max(MIN_JOURNAL_ROOM, this.base.size) &&
      fileVersion(checkpoint) === this.checkpointVersion &&
      fileVersion(journal) === this.journalVersion
    );
  }

  /**
   * Appends, and flushes, the record of the project file's next content; returns what takes the
   * record back, for a replace of the project file that fails.
   */
  async record(pieces: readonly Uint8Array[], modified: number): Promise<() => Promise<void>> {
    const record = encodeRecord({ modified, size: contentBytes(pieces), ops: this.base.delta(pieces) });
    const { journal } = journalPaths(this.projectPath);
    const before = this.journalLength;
    try {
      // Appended: the journal ends where this process's last record did, as its version showed.
      await writeDurably(journal, 'a', (handle) => writePieces(handle, record));
    } catch (error) {
      this.usable = false;
      throw error;
    }
    this.journalLength = before + contentBytes(record);
    this.journalVersion = fileVersion(journal);
    this.records += 1;
    this.base = DeltaBase.of(pieces);
    return async () => {
      this.usable = false;
      await writeDurably(journal, 'r+', (handle) => handle.truncate(before));
    };
  }
}

/** Modification times within this are the same: the record holds a time in seconds as a double. */
const MTIME_TOLERANCE_S = 1e-6;

/** How long after the record's modification time the file's is (seconds). */
function secondsAfter(current: BigIntStats, record: JournalRecord): number {
  return Number(current.mtimeNs) / 1e9 - record.modified;
}

/** When the system started (seconds since the epoch); 0 when it cannot be told. */
async function bootTime(): Promise<number> {
  const stats = await readFile('/proc/stat', 'utf8').catch(() => '');
  return Number(/^btime (\d+)$/m.exec(stats)?.[1] ?? 0);
}

/**
 * Whether the project file is the one the record describes: the same size and modification time,
 * and, unless the system has run without a restart since the journal was written (the file's
 * bytes then being whatever its writer gave the system), the same bytes.
 */
async function holdsRecord(
  projectPath: string,
  current: BigIntStats,
  journalPath: string,
  content: () => Promise<Buffer>,
  last: JournalRecord,
): Promise<boolean> {
  if (Number(current.size) !== last.size || Math.abs(secondsAfter(current, last)) > MTIME_TOLERANCE_S) return false;
  const booted = await bootTime();
  if (booted > 0 && (await stat(journalPath)).mtimeMs / 1000 > booted) return true;
  return (await readFile(projectPath)).equals(await content());
}

/**
 * After a crash: rebuilds the project file from its checkpoint and the journal's records when the
 * file lost the last write, flushes it, and removes journal and checkpoint. A project file changed after
 * the last record (by QGIS or by hand) is kept. Runs under the project's lock; true when there was a
 * journal or checkpoint to clear. Throws, leaving every file as it was, when the journal is damaged
 * (no header, a record before the last that fails its check, or a record that does not apply to the
 * checkpoint) or a file cannot be read or written.
 */
export async function recoverJournal(projectPath: string): Promise<boolean> {
  const { checkpoint, journal } = journalPaths(projectPath);
  const bytes = await readFile(journal).catch(() => undefined);
  if (!bytes && !fileStats(checkpoint)) return false;
  const decoded = bytes && decodeJournal(journal, bytes);
  const records = decoded?.records ?? [];
  const last = records.at(-1);
  const current = fileStats(projectPath);
  if (last && current && fileVersion(checkpoint) === decoded?.checkpointVersion) {
    const changedSince = secondsAfter(current, last) > MTIME_TOLERANCE_S;
    const content = async () => {
      let version: Buffer = await readFile(checkpoint);
      for (const record of records) version = applyDelta(version, record.ops);
      return version;
    };
    if (!changedSince && !(await holdsRecord(projectPath, current, journal, content, last))) {
      await writeFileAtomic(projectPath, await content(), { modified: last.modified });
    }
  }
  if (current) await flushToDisk(projectPath);
  await flushToDisk(dirname(projectPath));
  await rm(journal, { force: true });
  await rm(checkpoint, { force: true });
  return true;
}
