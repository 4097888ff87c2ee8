/**
 * A folder of files written under a hidden name beside where it goes (`.upload.<uuid>.tmp`, which
 * clearing upload leftovers knows) and renamed into place once every file is whole: readers never
 * see it half written, and a process that dies while writing it leaves nothing they see. A folder
 * removed (staged or kept) takes the folder it was in with it when that is left empty, as the
 * first file made it: a refused upload leaves no trace.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { removeIfEmpty } from './made-folders.js';

/**
 * Removes `folder` and what it holds, then the folder it is in if that is left empty. Another
 * upload's folder there keeps it: its hidden folder is made in the same call that makes it again
 * should it go meanwhile (a recursive mkdir retries a parent that vanished).
 */
export async function removeStaged(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true });
  await removeIfEmpty(dirname(folder));
}

export class StagedFolder {
  /** The hidden folder, once a file is written to it. */
  private staging: string | undefined;
  private readonly files = new Set<string>();

  /**
   * `parent` is asked for the folder it goes in when the first file is written (it may refuse);
   * `name` is the hidden folder's, which another thread writing it is given.
   */
  constructor(
    private readonly parent: () => string,
    readonly name = `.upload.${randomUUID()}.tmp`,
  ) {}

  /** The path to write the file `name` (segments by `/`) to, its folders made. */
  async pathFor(name: string): Promise<string> {
    this.staging ??= join(this.parent(), this.name);
    const path = join(this.staging, ...name.split('/'));
    await mkdir(dirname(path), { recursive: true });
    this.files.add(name);
    return path;
  }

  /** The files written, by name. */
  names(): string[] {
    return [...this.files];
  }

  async remove(name: string): Promise<void> {
    if (this.staging === undefined || !this.files.delete(name)) return;
    await rm(join(this.staging, ...name.split('/')), { force: true });
  }

  /** Renames the folder to `name` beside it, where readers see it; its path. */
  async keep(name: string): Promise<string> {
    if (this.staging === undefined) throw new Error('no file was written to the staged folder');
    const kept = join(dirname(this.staging), name);
    await rename(this.staging, kept);
    this.staging = undefined;
    return kept;
  }

  /** Takes on the files `names` that another thread wrote to the folder of this one's name. */
  adopt(names: string[]): void {
    if (names.length === 0) return;
    this.staging = join(this.parent(), this.name);
    for (const name of names) this.files.add(name);
  }

  /**
   * Removes the folder and what it holds (and the folder it is in, when left empty), also when
   * another thread made it (one that ended before it could say what it wrote).
   */
  async discard(): Promise<void> {
    const folder = this.staging ?? (await this.madeElsewhere());
    if (folder !== undefined) await removeStaged(folder);
    this.staging = undefined;
  }

  /** The folder of this one's name, when there is one: its name is this upload's alone. */
  private async madeElsewhere(): Promise<string | undefined> {
    let folder: string;
    try {
      folder = join(this.parent(), this.name);
    } catch {
      return undefined; // refused: nothing could have been written
    }
    return (await stat(folder).catch(() => undefined)) ? folder : undefined;
  }

  /** Where the files are written now: the folder it goes in, before the first. */
  where(): string | undefined {
    return this.staging;
  }
}
