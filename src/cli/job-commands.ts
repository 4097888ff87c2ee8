/** The `steward` subcommands for jobs: the table, a seed, one job followed to its end. */
import { setTimeout as sleep } from 'node:timers/promises';

import { CliError, type Job, type StewardApi } from './api.js';
import { type Command, type Io, json, JSON_OPTION, SCHEMA_OPTION } from './command.js';
import { duration, progressBar } from './format.js';
import { formatTable } from './table.js';

/** How often `--watch` asks for the job. */
export const JOB_POLL_MS = 500;

function percent(job: Job): string {
  return `${Math.floor(job.progress * 100)}%`;
}

/** What is left, from the pace so far; unknown before any progress. */
function eta(job: Job, now: number): string {
  if (job.started === null || job.progress <= 0) return 'ETA -';
  const elapsed = now - Date.parse(job.started);
  return `ETA ${duration((elapsed * (1 - job.progress)) / job.progress)}`;
}

/** `[########------] 57%  57/100  ETA 12s  running`. */
export function progressLine(job: Job, now: number): string {
  const bar = progressBar(job.progress);
  const counts = job.total > 0 ? `  ${job.done}/${job.total}` : '';
  const left = job.state === 'running' ? `  ${eta(job, now)}` : '';
  return `${bar} ${percent(job).padStart(4)}${counts}${left}  ${job.state}`;
}

function ended(job: Job): boolean {
  return job.state === 'succeeded' || job.state === 'failed' || job.state === 'cancelled';
}

/**
 * Follows the job until it ends, a progress bar redrawn in place on a terminal, a line per change
 * otherwise; resolves to the ended job, or undefined once interrupted.
 */
export async function followJob(api: StewardApi, id: string, io: Io): Promise<Job | undefined> {
  let shown = '';
  for (;;) {
    const job = await api.job(id);
    const line = progressLine(job, Date.now());
    if (line !== shown) io.out(io.isTTY ? `\r\x1b[K${line}` : `${line}\n`);
    shown = line;
    if (ended(job)) return finished(job, io);
    if (io.signal.aborted) return undefined;
    await sleep(JOB_POLL_MS, undefined, { signal: io.signal }).catch(() => {});
  }
}

function finished(job: Job, io: Io): Job {
  if (io.isTTY) io.out('\n');
  if (job.state !== 'succeeded')
    io.err(`steward: job ${job.id} ${job.state}${job.error === null ? '' : `: ${job.error}`}\n`);
  return job;
}

/** The exit code of a followed job: 0 when it succeeded, 130 when interrupted, else 1. */
export function jobExitCode(job: Job | undefined): number {
  if (job === undefined) return 130;
  return job.state === 'succeeded' ? 0 : 1;
}

async function follow(api: StewardApi, id: string, io: Io): Promise<number> {
  return jobExitCode(await followJob(api, id, io));
}

const WATCH_OPTION = { watch: 'follow the job with a progress bar until it ends; exit 1 unless it succeeds' };

export const jobs: Command = {
  summary: 'List the jobs (seeding, truncation), newest first',
  arguments: [],
  options: JSON_OPTION,
  async run(api, { flags }, io) {
    const list = await api.jobs();
    if (flags['json']) return io.out(json(list));
    const rows = list.map((job) => [
      job.id,
      job.kind,
      job.project,
      job.state,
      percent(job),
      job.created,
      job.error ?? '',
    ]);
    io.out(formatTable(['JOB ID', 'KIND', 'PROJECT', 'STATE', 'PROGRESS', 'CREATED', 'ERROR'], rows));
  },
};

export const job: Command = {
  summary: 'Print a job, or follow it with --watch',
  arguments: ['<job_id>'],
  options: { ...JSON_OPTION, ...WATCH_OPTION },
  async run(api, { ids: [id = ''], flags }, io) {
    if (flags['watch']) return follow(api, id, io);
    const current = await api.job(id);
    io.out(
      flags['json']
        ? json(current)
        : `${current.id}  ${current.kind}  ${current.project}\n${progressLine(current, Date.now())}\n`,
    );
    return current.state === 'failed' ? 1 : 0;
  },
};

/** `0-8` or `5`: the levels a seed covers. */
function levels(text: string | undefined): { min_zoom: number; max_zoom: number } {
  const match = /^(\d{1,2})(?:-(\d{1,2}))?$/.exec(text ?? '');
  if (!match) throw new CliError(`--levels must look like 0-8 or 5, not "${text ?? ''}"`);
  const from = Number(match[1]);
  return { min_zoom: from, max_zoom: match[2] === undefined ? from : Number(match[2]) };
}

export const seed: Command = {
  summary: "Seed a project's tile cache on the given levels (all its layers)",
  arguments: ['<project>'],
  options: { ...JSON_OPTION, ...WATCH_OPTION },
  valueOptions: { levels: 'zoom levels, as 0-8 (required)', ...SCHEMA_OPTION },
  async run(api, { ids: [project = ''], flags, values }, io) {
    const started = await api.seed(project, levels(values['levels']), values['schema']);
    if (flags['watch']) return follow(api, started.id, io);
    io.out(flags['json'] ? json(started) : `${started.id}\n`);
  },
};
