import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { after } from './node-test.js';

/** A new folder in the system's temporary folder, removed once the test file's tests are done. */
export function scratchFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/**
 * Opens the file at `path` now; the function returned reads the first `length` bytes of that file,
 * whatever the path names by then, and closes it.
 */
export function holdOpen(path: string): (length: number) => string {
  const descriptor = openSync(path, 'r');
  return (length) => {
    const bytes = Buffer.alloc(length);
    readSync(descriptor, bytes, 0, length, 0);
    closeSync(descriptor);
    return bytes.toString();
  };
}
