import { existsSync, type FSWatcher, watch } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { writeFileAtomic } from '../storage/atomic-file.js';
import {
  type AccessStore,
  type AuditEntry,
  type AuditFilter,
  auditMatches,
  type RoleDefinition,
  type TokenRecord,
} from './records.js';
import { isTokenId } from './token-secret.js';

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The UTC day of an ISO time, as the audit files are named. */
function dayOf(time: string): string {
  return new Date(time).toISOString().slice(0, 10);
}

async function removed(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** The folder of the projects directory that holds tokens, roles and the audit log. */
export const ACCESS_DIR = '.access';

/**
 * Tokens, roles and the audit log in the hidden `.access` folder of the projects directory:
 * `tokens/<id>.json` and `roles/<role>.json`, each written atomically, and `audit/<day>.jsonl`,
 * one line an entry appended (docs/access.md). Names reach it checked.
 */
export class FilesystemAccessStore implements AccessStore {
  private readonly tokensDir: string;
  private readonly rolesDir: string;
  private readonly auditDir: string;

  /** The tokens read, by id: their files do not change (tokens()). */
  private readonly tokensRead = new Map<string, TokenRecord>();

  constructor(projectsDir: string) {
    const root = join(projectsDir, ACCESS_DIR);
    this.tokensDir = join(root, 'tokens');
    this.rolesDir = join(root, 'roles');
    this.auditDir = join(root, 'audit');
  }

  /**
   * Every token. A token's file is written once and removed when it is revoked, never changed:
   * only the files of ids not read before are read, so that reading 10,000 tokens again (every
   * 5 s, AccessService) lists a folder instead of parsing 10,000 files (1.5 s of CPU).
   */
  async tokens(): Promise<TokenRecord[]> {
    this.watchExisting();
    const ids = (await entries(this.tokensDir))
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -5));
    const present = new Set(ids);
    for (const id of this.tokensRead.keys()) if (!present.has(id)) this.tokensRead.delete(id);
    const fresh = await Promise.all(ids.filter((id) => !this.tokensRead.has(id)).map((id) => this.token(id)));
    for (const token of fresh) if (token !== undefined) this.tokensRead.set(token.id, token);
    return ids.flatMap((id) => this.tokensRead.get(id) ?? []);
  }

  async token(id: string): Promise<TokenRecord | undefined> {
    if (!isTokenId(id)) return undefined;
    return readJson<TokenRecord>(join(this.tokensDir, `${id}.json`));
  }

  async addToken(token: TokenRecord): Promise<void> {
    await mkdir(this.tokensDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(join(this.tokensDir, `${token.id}.json`), JSON.stringify(token));
  }

  async removeToken(id: string): Promise<boolean> {
    this.tokensRead.delete(id);
    return isTokenId(id) && removed(join(this.tokensDir, `${id}.json`));
  }

  async roles(): Promise<Map<string, RoleDefinition>> {
    this.watchExisting();
    const names = (await entries(this.rolesDir)).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
    const roles = await Promise.all(
      names.map(
        async (file) => [file.slice(0, -5), await readJson<RoleDefinition>(join(this.rolesDir, file))] as const,
      ),
    );
    return new Map(roles.filter((entry): entry is [string, RoleDefinition] => entry[1] !== undefined));
  }

  async putRole(name: string, role: RoleDefinition): Promise<boolean> {
    await mkdir(this.rolesDir, { recursive: true });
    const path = join(this.rolesDir, `${name}.json`);
    const existed = (await readJson(path)) !== undefined;
    await writeFileAtomic(path, JSON.stringify(role));
    return !existed;
  }

  async removeRole(name: string): Promise<boolean> {
    return removed(join(this.rolesDir, `${name}.json`));
  }

  /** One `write` of one line with O_APPEND: entries of several processes never interleave. */
  async appendAudit(entry: AuditEntry): Promise<void> {
    await mkdir(this.auditDir, { recursive: true });
    await appendFile(join(this.auditDir, `${entry.at.slice(0, 10)}.jsonl`), `${JSON.stringify(entry)}\n`);
  }

  async audit(filter: AuditFilter): Promise<AuditEntry[]> {
    const sinceDay = filter.since === undefined ? '' : dayOf(filter.since);
    const untilDay = filter.until === undefined ? '9' : dayOf(filter.until);
    const days = (await entries(this.auditDir))
      .filter((name) => {
        const day = name.slice(0, 10);
        return /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(name) && day >= sinceDay && day <= untilDay;
      })
      .sort()
      .reverse();
    const found: AuditEntry[] = [];
    for (const day of days) {
      const lines = (await readFile(join(this.auditDir, day), 'utf8')).split('\n').reverse();
      for (const line of lines) {
        if (line === '') continue;
        let entry: AuditEntry;
        try {
          entry = JSON.parse(line) as AuditEntry;
        } catch {
          continue; // a line cut short by a crash
        }
        if (!auditMatches(entry, filter)) continue;
        found.push(entry);
        if (found.length >= filter.limit) return found;
      }
    }
    return found;
  }

  /**
   * inotify on the two folders once they exist (each read looks again), so that the folder of the
   * projects gains nothing until a token or role is made; a change another process makes before
   * then is seen at the next refresh.
   */
  async watch(changed: () => void): Promise<{ stop(): Promise<void> }> {
    this.changed = changed;
    this.watchExisting();
    return {
      stop: async () => {
        this.changed = undefined;
        for (const watcher of this.watchers.values()) watcher.close();
        this.watchers.clear();
      },
    };
  }

  private changed: (() => void) | undefined;
  private readonly watchers = new Map<string, FSWatcher>();

  private watchExisting(): void {
    const changed = this.changed;
    if (!changed) return;
    for (const dir of [this.tokensDir, this.rolesDir]) {
      if (this.watchers.has(dir) || !existsSync(dir)) continue;
      try {
        this.watchers.set(
          dir,
          watch(dir, { persistent: false }, () => changed()).on('error', () => undefined),
        );
      } catch {
        // A file system without change notification: the periodic refresh is all there is.
      }
    }
  }
}
