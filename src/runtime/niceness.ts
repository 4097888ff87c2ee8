/**
 * The priority of threads doing bulk work: a GDAL worker process's, an upload's receiving thread.
 * Light on purpose: a GDAL worker's entry point sets it before it loads GDAL, whose loading takes
 * most of a worker's start.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Niceness of background work: behind the requests the API answers. */
export const BACKGROUND_NICENESS = 10;

/** The niceness the process started with: its parent's, the API's for a worker. */
export const STARTING_NICENESS = getPriority();

/**
 * Sets the niceness of every thread of this process (Linux's niceness is a thread's): Node's and
 * libuv's, which GDAL's reads and writes run on. The threads started later inherit it from these.
 */
export function setNiceness(niceness: number): void {
  for (const thread of readdirSync('/proc/self/task')) {
    try {
      setPriority(Number(thread), niceness);
    } catch {
      // Ended meanwhile, or not allowed (lowering a niceness needs CAP_SYS_NICE or RLIMIT_NICE).
    }
  }
}

/** Sets the niceness of the calling thread alone (a worker thread's: `/proc/thread-self` names it). */
export function setThreadNiceness(niceness: number): void {
  const thread = Number(readlinkSync('/proc/thread-self').split('/').pop());
  try {
    setPriority(thread, niceness);
  } catch {
    // Not allowed: the thread keeps the niceness it has.
  }
}
