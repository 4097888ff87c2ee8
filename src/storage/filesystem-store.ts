import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Conflict } from '../errors.js';
import { writeFileAtomic } from './atomic-file.js';
import { KeyedMutex, withFileLock } from './lock.js';
import { ProjectArchive } from './project-archive.js';
import { type ProjectRef, type ProjectStore, type StoredProject } from './project-store.js';

const PROJECT_EXTENSIONS = ['.qgs', '.qgz'] as const;

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Projects as folders of the projects directory: `<dir>/<name>/<name>.qgs` (or `.qgz`, as QGIS
 * saves them), with the internal database and styles beside the project file.
 */
export class FilesystemStore implements ProjectStore {
  readonly kind = 'filesystem' as const;
  private readonly mutex = new KeyedMutex();

  constructor(private readonly projectsDir: string) {}

  dataDir(ref: ProjectRef): string {
    return join(this.projectsDir, ref.name);
  }

  private newProjectPath(ref: ProjectRef): string {
    return join(this.dataDir(ref), `${ref.name}.qgs`);
  }

  /** The .qgs (or .qgz, for a project saved by QGIS) that QGIS Server opens. */
  async mapParameter(ref: ProjectRef): Promise<string> {
    return (await this.projectFile(ref))?.path ?? this.newProjectPath(ref);
  }

  /** The project file that exists, .qgs first; undefined when neither does. */
  private async projectFile(ref: ProjectRef): Promise<{ path: string; identity: string } | undefined> {
    for (const extension of PROJECT_EXTENSIONS) {
      const path = join(this.dataDir(ref), ref.name + extension);
      try {
        const info = await stat(path, { bigint: true });
        if (info.isFile()) return { path, identity: `${info.ino}:${info.size}:${info.mtimeNs}` };
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return undefined;
  }

  async list(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(this.projectsDir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const names: string[] = [];
    for (const entry of entries.filter((name) => !name.startsWith('.')).sort()) {
      if (await this.projectFile({ name: entry, schema: 'public' })) names.push(entry);
    }
    return names;
  }

  async identity(ref: ProjectRef): Promise<string | undefined> {
    return (await this.projectFile(ref))?.identity;
  }

  async read(ref: ProjectRef): Promise<StoredProject | undefined> {
    const file = await this.projectFile(ref);
    if (!file) return undefined;
    const bytes = await readFile(file.path);
    const text = file.path.endsWith('.qgz') ? ProjectArchive.open(bytes).text : bytes.toString('utf8');
    return { text, identity: file.identity };
  }

  async create(ref: ProjectRef, text: string): Promise<void> {
    await mkdir(this.projectsDir, { recursive: true });
    if (await this.projectFile(ref)) throw new Conflict(`project "${ref.name}" already exists`);
    // Built in a hidden folder and renamed into place, so a project appears whole or not at all.
    const staging = join(this.projectsDir, `.creating-${randomUUID()}`);
    await mkdir(staging);
    try {
      await writeFileAtomic(join(staging, `${ref.name}.qgs`), text);
      await rename(staging, this.dataDir(ref));
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new Conflict(`project "${ref.name}" already exists`);
      throw error;
    }
  }

  async write(ref: ProjectRef, text: string): Promise<string> {
    const file = await this.projectFile(ref);
    const path = file?.path ?? this.newProjectPath(ref);
    if (path.endsWith('.qgz')) {
      // Other archive members (the auxiliary storage database) are kept as they were.
      const archive = ProjectArchive.open(await readFile(path));
      archive.text = text;
      await writeFileAtomic(path, archive.bytes());
    } else {
      await writeFileAtomic(path, text);
    }
    const written = await this.projectFile(ref);
    if (!written) throw new Error(`project "${ref.name}" vanished while being written`);
    return written.identity;
  }

  async remove(ref: ProjectRef): Promise<boolean> {
    if (!(await this.projectFile(ref))) return false;
    const doomed = join(this.projectsDir, `.deleting-${randomUUID()}`);
    await rename(this.dataDir(ref), doomed);
    await rm(doomed, { recursive: true, force: true });
    return true;
  }

  withLock<T>(ref: ProjectRef, work: () => Promise<T>): Promise<T> {
    const lockPath = join(this.projectsDir, '.locks', `${ref.name}.lock`);
    return this.mutex.run(ref.name, () => withFileLock(lockPath, work));
  }
}
