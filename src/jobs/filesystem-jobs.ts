import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { writeFileAtomic } from '../storage/atomic-file.js';
import { withFileLock } from '../storage/lock.js';
import { type JobFilter, type JobRecord, matches } from './record.js';
import { type JobStore, newestFirst } from './store.js';

/** Job ids are UUIDs; anything else never names a file. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Jobs as JSON files in the hidden `.jobs` folder of the projects directory (hidden folders are
 * never projects), one file per job, written atomically; updates take turns on one lock file.
 */
export class FilesystemJobStore implements JobStore {
  private readonly dir: string;

  constructor(projectsDir: string) {
    this.dir = join(projectsDir, '.jobs');
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  async insert(job: JobRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFileAtomic(this.file(job.id), JSON.stringify(job));
  }

  async get(id: string): Promise<JobRecord | undefined> {
    if (!JOB_ID.test(id)) return undefined;
    try {
      return JSON.parse(await readFile(this.file(id), 'utf8')) as JobRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async list(filter: JobFilter): Promise<JobRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const ids = names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length));
    const jobs = await Promise.all(ids.map((id) => this.get(id)));
    return jobs.filter((job): job is JobRecord => job !== undefined && matches(job, filter)).sort(newestFirst);
  }

  async update(id: string, change: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined> {
    await mkdir(this.dir, { recursive: true });
    return withFileLock(join(this.dir, '.lock'), async () => {
      const job = await this.get(id);
      if (job === undefined) return undefined;
      const changed = change(job);
      if (changed === undefined) return job;
      await writeFileAtomic(this.file(id), JSON.stringify(changed));
      return changed;
    });
  }
}
