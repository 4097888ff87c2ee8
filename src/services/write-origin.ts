import { AsyncLocalStorage } from 'node:async_hooks';

/** Who made a write and through which route: the client's address until identities exist. */
export interface WriteOrigin {
  who: string;
  route: string;
}

/** Writes made by Steward itself (at start-up, a job) rather than for a request. */
const STEWARD: WriteOrigin = { who: 'steward', route: '' };

const origins = new AsyncLocalStorage<WriteOrigin>();

/** Runs `work` with `origin` as the origin of the writes it makes, however deep. */
export function withWriteOrigin<T>(origin: WriteOrigin, work: () => T): T {
  return origins.run(origin, work);
}

/** The origin of the write being made now. */
export function writeOrigin(): WriteOrigin {
  return origins.getStore() ?? STEWARD;
}
