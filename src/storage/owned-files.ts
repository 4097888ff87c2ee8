/**
 * Files a process makes beside another without holding the project's lock, which a process that
 * starts must tell from a killed process's leftovers: the calculator's work file, and the raster it
 * replaces while moving the new one into place. Their names carry their owner (a hash of the host's
 * name, the pid, and the process's start time as the kernel counts it), so that clearing removes
 * one only when its owner is provably gone: on this host, no process has that pid and start time.
 * A file of another host's process is left to that host's processes.
 */
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

import { procStatField } from '../runtime/proc-stat.js';

export interface Owner {
  host: string;
  pid: number;
  start: string;
}

/** An owned file's name taken apart: the name it was made beside, its kind and its owner. */
export interface OwnedFile {
  target: string;
  kind: string;
  owner: Owner;
}

/** `.<target>.<host>-<pid>-<start>-<n>.<kind>`, or GDAL's `.aux.xml` beside such a file. */
const OWNED_NAME = /^\.(.+)\.([0-9a-f]{8})-(\d+)-(\d+)-\d+\.([a-z]+)(?:\.aux\.xml)?$/;

const HOST = crc32(hostname()).toString(16).padStart(8, '0');

/**
 * Bytes an owned name adds to its target's at most: two dots, the owner (host, a pid under 2^22,
 * start ticks under 2^64, the count of names this process made), the kind and GDAL's `.aux.xml`.
 */
const OWNED_NAME_BYTES = 2 + 8 + 1 + 7 + 1 + 20 + 1 + 16 + '.replaced'.length + '.aux.xml'.length;

/** The longest name, in bytes, whose owned files have valid names (255 bytes at most). */
export const MAX_OWNED_TARGET_BYTES = 255 - OWNED_NAME_BYTES;

/** The start time of process `pid` in clock ticks after boot; undefined when there is no such process. */
function startTime(pid: number): string | undefined {
  return procStatField(`/proc/${pid}/stat`, 22);
}

/** The owner that files of the process `pid` name; undefined when there is no such process. */
export function processOwner(pid: number): Owner | undefined {
  const start = startTime(pid);
  return start === undefined ? undefined : { host: HOST, pid, start };
}

/** Without /proc, no owner can be told gone. */
const THIS_OWNER = processOwner(process.pid);

let made = 0;

/** A new name beside `path` for a file of `kind` that `owner` (this process unless told) makes. */
export function ownedSibling(path: string, kind: string, owner = THIS_OWNER): string {
  const { host, pid, start } = owner ?? { host: HOST, pid: process.pid, start: '0' };
  made += 1;
  return join(dirname(path), `.${basename(path)}.${host}-${pid}-${start}-${made}.${kind}`);
}

/** The owned file that `fileName` names; undefined for any other name. */
export function ownedFile(fileName: string): OwnedFile | undefined {
  const match = OWNED_NAME.exec(fileName);
  if (!match) return undefined;
  const [, target = '', host = '', pid = '', start = '', kind = ''] = match;
  return { target, kind, owner: { host, pid: Number(pid), start } };
}

/** Whether no process runs of those whose files `owner` names: of this host, and gone from it. */
export function ownerGone(owner: Owner): boolean {
  if (THIS_OWNER === undefined || owner.host !== HOST) return false;
  return startTime(owner.pid) !== owner.start;
}
