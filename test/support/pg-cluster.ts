import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

import { type ClientConfig } from 'pg';

import { freePort } from '../../src/runtime/ports.js';

/** A PostgreSQL cluster of the tests' own, in a temporary folder on a free loopback port. */
export interface OwnCluster {
  admin: ClientConfig;
  stop(): void;
}

/** The folder of initdb and pg_ctl: PATH first, else the newest Debian PostgreSQL. */
function binDir(): string {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  const versions = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
    : [];
  const found = versions
    .map((version) => join('/usr/lib/postgresql', version, 'bin'))
    .find((dir) => existsSync(join(dir, 'initdb')));
  if (!found) throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) found');
  return found;
}

/** PostgreSQL refuses to run as root: then the cluster belongs to the postgres user. */
function runAsOwner(command: string, args: string[]): void {
  const asRoot = userInfo().uid === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  execFileSync(file, argv, { stdio: 'pipe' });
}

function chownToPostgres(path: string): void {
  if (userInfo().uid !== 0) return;
  const id = (option: string): number => Number(execFileSync('id', [option, 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(path, id('-u'), id('-g'));
}

/** initdb + pg_ctl start: loopback TCP with password authentication, the socket in the folder. */
export async function startOwnCluster(): Promise<OwnCluster> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'steward-pg-'));
  const data = join(dir, 'data');
  const password = `admin-${process.pid}-${Date.now()}`;
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, password);
  chownToPostgres(dir);
  chownToPostgres(passwordFile);
  runAsOwner(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    `--pwfile=${passwordFile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
  ]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  runAsOwner(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', 'start']);
  return {
    admin: { host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' },
    stop() {
      runAsOwner(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
