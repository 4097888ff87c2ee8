import { type JobFilter, type JobRecord } from './record.js';

/** Where job records are kept: beside the projects, so they outlive the process. */
export interface JobStore {
  insert(job: JobRecord): Promise<void>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Newest first. */
  list(filter: JobFilter): Promise<JobRecord[]>;
  /**
   * Reads the job, hands it to `change` and stores what it returns, as one step against other
   * writers (other processes too); `change` returning undefined leaves the job as it is.
   */
  update(id: string, change: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined>;
}

export function newestFirst(a: JobRecord, b: JobRecord): number {
  return b.created.localeCompare(a.created) || b.id.localeCompare(a.id);
}
