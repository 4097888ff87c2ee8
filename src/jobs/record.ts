import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { processAlive } from '../runtime/process-alive.js';
import { type ProjectRef } from '../storage/project-store.js';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** The process that runs a job: a job whose owner is gone is failed by the next process to look. */
export interface JobOwner {
  pid: number;
  host: string;
}

/** One unit of long work and how far it got, as the API reports it and the store keeps it (docs/storage.md). */
export interface JobRecord {
  id: string;
  kind: string;
  project: string;
  /** The project's database schema, with projects in PostgreSQL. */
  schema?: string;
  state: JobState;
  /** From 0 to 1. */
  progress: number;
  done: number;
  /** 0 until the work knows how much there is. */
  total: number;
  created: string;
  started: string | null;
  finished: string | null;
  error: string | null;
  /** What the job was asked to do; its shape depends on the kind. */
  params: Record<string, unknown>;
  /** What the job produced, once it succeeded; its shape depends on the kind. */
  result?: Record<string, unknown>;
  owner: JobOwner;
  /** Renewed by the owner while the job is queued or running. */
  heartbeat: string;
}

export interface JobFilter {
  project?: string;
  schema?: string;
  kind?: string;
  state?: JobState;
}

export function isEnded(state: JobState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}

export function matches(job: JobRecord, filter: JobFilter): boolean {
  return (
    (filter.project === undefined || job.project === filter.project) &&
    (filter.schema === undefined || job.schema === filter.schema) &&
    (filter.kind === undefined || job.kind === filter.kind) &&
    (filter.state === undefined || job.state === filter.state)
  );
}

export function thisProcess(): JobOwner {
  return { pid: process.pid, host: hostname() };
}

/**
 * Whether the process that owns an unfinished job is gone: on this host its pid no longer exists,
 * elsewhere (or after the pid was reused) its heartbeat is older than the lease.
 */
export function ownerGone(job: JobRecord, now: number, leaseMs: number): boolean {
  const self = thisProcess();
  if (job.owner.host === self.host && job.owner.pid === self.pid) return false;
  if (job.owner.host === self.host && !processAlive(job.owner.pid)) return true;
  return now - Date.parse(job.heartbeat) > leaseMs;
}

/** A new job of `owner`, queued; `withSchema` when projects are in PostgreSQL, whose records name the schema. */
export function queuedJob(
  kind: string,
  project: ProjectRef,
  params: Record<string, unknown>,
  owner: JobOwner,
  withSchema: boolean,
): JobRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    kind,
    project: project.name,
    ...(withSchema && { schema: project.schema }),
    state: 'queued',
    progress: 0,
    done: 0,
    total: 0,
    created: now,
    started: null,
    finished: null,
    error: null,
    params,
    owner,
    heartbeat: now,
  };
}
