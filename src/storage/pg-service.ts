import { readFileSync } from 'node:fs';

import { type ClientConfig } from 'pg';

import { ConfigError } from '../config.js';

/** The `key=value` entries of every `[section]` of a service file, as libpq parses it. */
export function parseServiceFile(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1] as string, current);
      continue;
    }
    const equals = line.indexOf('=');
    if (current && equals > 0) current.set(line.slice(0, equals).trim(), line.slice(equals + 1).trim());
  }
  return sections;
}

function readSection(path: string, service: string): Map<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`cannot read the PostgreSQL service file ${path}: ${(error as Error).message}`);
  }
  return parseServiceFile(text).get(service);
}

function sslOption(mode: string | undefined): ClientConfig['ssl'] {
  if (mode === undefined || mode === 'disable' || mode === 'allow' || mode === 'prefer') return undefined;
  if (mode === 'require') return { rejectUnauthorized: false };
  return true;
}

function portOption(service: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new ConfigError(`PostgreSQL service "${service}" has port "${text}", which is not a port number`);
  }
  return port;
}

/**
 * The connection settings of a named service, read from the first of `files` (`serviceFiles` of
 * `src/config.ts`) that defines it.
 * Entries the section leaves out fall back to pg's own defaults (PGHOST, PGUSER, ~/.pgpass, ...),
 * as libpq's do.
 */
export function resolveService(service: string, files: readonly string[]): ClientConfig {
  for (const file of files) {
    const section = readSection(file, service);
    if (!section) continue;
    const config: ClientConfig = {
      host: section.get('host') ?? section.get('hostaddr'),
      port: portOption(service, section.get('port')),
      database: section.get('dbname'),
      user: section.get('user'),
      password: section.get('password'),
      ssl: sslOption(section.get('sslmode')),
    };
    return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  }
  throw new ConfigError(`PostgreSQL service "${service}" is not defined in ${files.join(' or ')}`);
}

/** `user@host:port/dbname` of a connection, for messages (never the password). */
export function describeConnection(config: ClientConfig): string {
  return `${config.user ?? ''}${config.user ? '@' : ''}${config.host ?? 'localhost'}:${config.port ?? 5432}/${config.database ?? ''}`;
}
