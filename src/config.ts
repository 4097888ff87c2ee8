import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';

import { type BasemapSetting, readBasemaps } from './basemap-settings.js';
import { readS3Settings, type S3Settings } from './s3-settings.js';

/**
 * Steward's settings, read once from the environment. Only this module and the entry points read
 * `process.env`; every other module is handed the settings it needs.
 */
export type LogLevel = 'debug' | 'info' | 'error';

/** Where a server listens: a host name or IP address (IPv6 without brackets) and a port. */
export interface ServerAddress {
  host: string;
  port: number;
}

/** OpenID Connect (docs/access.md): the issuer whose bearer JWTs the API takes, and the console's client. */
export interface OidcSettings {
  /** STEWARD_OIDC_ISSUER: the `iss` of the tokens, whose discovery document names its keys. */
  issuer: string;
  /** STEWARD_OIDC_AUDIENCE: the `aud` the tokens must carry. */
  audience: string;
  /** STEWARD_OIDC_ROLES_CLAIM: the claim (a dotted path) holding the Steward roles. */
  rolesClaim: string;
  /** STEWARD_OIDC_NAME_CLAIM: the claim naming the identity; `preferred_username`, then `sub`, when undefined. */
  nameClaim: string | undefined;
  /** STEWARD_OIDC_CLIENT_ID: the console's public client; no login in the console without it. */
  clientId: string | undefined;
  /** STEWARD_OIDC_SCOPE: what the console asks for. */
  scope: string;
}

export interface Config {
  qgisServerUrl: string;
  /** STEWARD_PUBLIC_OWS_URL: where clients reach QGIS Server (nginx's public address); the internal one when undefined. */
  publicOwsUrl?: string | undefined;
  /** QGIS Server's FastCGI processes, which the API sends its GETs to when set. */
  qgisServerFcgi?: ServerAddress[] | undefined;
  /** The settings QGIS Server reads while it serves a request, sent with each FastCGI request (qgisRequestSettings). */
  qgisRequestSettings?: Array<[string, string]>;
  projectsDir: string;
  logLevel: LogLevel;
  listen: { host: string; port: number };
  psqlService: string | undefined;
  /** The PostgreSQL connection service files, in the order libpq reads them. */
  pgServiceFiles: string[];
  monitoringPort: number | undefined;
  monitoringToken: string | undefined;
  mapproxyProjectsDir: string | undefined;
  /** Where MapProxy answers, for the readiness check; only asked when the cache is on. */
  mapproxyUrl?: string | undefined;
  cacheS3Bucket: string | undefined;
  cacheS3Dir: string;
  /** Endpoint, region and credentials of S3, for GDAL, the tile cache and MapProxy. */
  s3: S3Settings;
  /** When set, every /api route requires `Authorization: Bearer <token>`. */
  apiToken: string | undefined;
  /** Bearer JWTs of an OpenID provider taken besides the API tokens (needs `apiToken`). */
  oidc?: OidcSettings | undefined;
  /** When set, filesystem datasources and outputs must lie inside these folders. */
  dataRoots: string[] | undefined;
  /** Where published projects' data files go, `<root>/<project>/` (STEWARD_UPLOAD_ROOT, a data root). */
  uploadRoot?: string | undefined;
  /** Bytes a project upload (`.qgs`, `.qgz` or bundle) may have (STEWARD_PUBLISH_BODY_LIMIT). */
  publishBodyLimit?: number;
  /** Whether datasources naming other datasets (VRT, `CSV:` and other driver prefixes) are taken. */
  allowIndirectDatasources?: boolean;
  /** Hosts whose http(s) images and SVG files styles may name; none when empty. */
  styleRemoteHosts?: string[];
  /** Bytes a style upload (QML or style package) may have; other bodies keep the API's 1 MiB. */
  styleBodyLimit: number;
  /** Wrong API tokens an address may send in a minute before it is refused with 429. */
  tokenFailures: number;
  /** Seconds a request body may stop arriving before the request is answered 408. */
  bodyIdleSeconds: number;
  /** Bytes of style uploads the API takes in at once; past them an upload is answered 503. */
  uploadBudget: number;
  /** Bytes a raster calculator or overview output may be estimated at; a larger one is refused. */
  processingOutputLimit: number;
  /** Bytes each disk Steward writes to keeps free: readiness fails below, processing refuses to go below. */
  minFreeSpace: number;
  /** How many jobs (seeding, processing) run at once. */
  jobsConcurrency: number;
  /** Estimated bytes of parsed projects kept in memory, the least recently read dropped first. */
  projectCacheBytes: number;
  /** Projects (schema public) every QGIS Server instance loads as soon as it registers. */
  pinnedProjects?: string[];
  /** The administered QGIS Server's version when no instance's plugin reports it (`3.40`, `3.44.15`). */
  qgisServerVersion?: string | undefined;
  /** How many versions of each project are kept (0: none are recorded), and for how many days. */
  history: { versions: number; days: number };
  /** The basemaps the console's maps offer (STEWARD_CONSOLE_BASEMAPS). */
  basemaps?: BasemapSetting[];
}

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    throw new ConfigError(`${name} is required but not set`);
  }
  return value.trim();
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function port(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535, not "${text}"`);
  }
  return value;
}

function logLevel(env: Env): LogLevel {
  const text = (optional(env, 'STEWARD_LOGLEVEL') ?? 'INFO').toUpperCase();
  if (text === 'DEBUG' || text === 'INFO' || text === 'ERROR') return text.toLowerCase() as LogLevel;
  throw new ConfigError(`STEWARD_LOGLEVEL must be DEBUG, INFO or ERROR, not "${text}"`);
}

/**
 * QGIS Server is spoken to over plain HTTP (`GET .../map` proxies its GetMap); a TLS endpoint is
 * refused at start rather than failing every map later.
 */
function qgisServerUrl(env: Env): string {
  const text = required(env, 'STEWARD_QGISSERVER_URL');
  if (!URL.canParse(text) || new URL(text).protocol !== 'http:') {
    throw new ConfigError(`STEWARD_QGISSERVER_URL must be an http:// URL of QGIS Server, not "${text}"`);
  }
  return text;
}

/**
 * STEWARD_PUBLIC_OWS_URL: the OWS address clients use, as QGIS Server's front (nginx) is reached
 * from outside; a base to add a project's MAP to, so without a query, fragment or credentials.
 */
function publicOwsUrl(env: Env): string | undefined {
  const text = optional(env, 'STEWARD_PUBLIC_OWS_URL');
  if (text === undefined) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(
      `STEWARD_PUBLIC_OWS_URL must be the http:// or https:// URL clients reach QGIS Server at, without a query or credentials (such as https://maps.example.org/ows/), not "${text}"`,
    );
  }
  return url.href;
}

/** `STEWARD_QGISSERVER_FCGI`: `host:port` of each FastCGI process (IPv6 as `[::1]:9001`), separated by commas. */
function qgisServerFcgi(env: Env): ServerAddress[] | undefined {
  const text = optional(env, 'STEWARD_QGISSERVER_FCGI');
  if (text === undefined) return undefined;
  return text.split(',').map((entry) => {
    const match = /^(?:\[([^\]]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(entry.trim());
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) {
      throw new ConfigError(
        `STEWARD_QGISSERVER_FCGI must list the host:port of each QGIS Server FastCGI process, separated by commas (such as 127.0.0.1:9001,127.0.0.1:9002): "${entry.trim()}" is not one`,
      );
    }
    return { host: match[1] ?? match[2] ?? '', port };
  });
}

/** `STEWARD_DATA_ROOTS`: absolute folders separated by `:` (as in PATH). */
function flag(env: Env, name: string): boolean {
  const text = optional(env, name);
  if (text === undefined || text === '0') return false;
  if (text === '1') return true;
  throw new ConfigError(`${name} must be 1 or 0, not "${text}"`);
}

/** Host names (lower case, with a port when given), separated by commas or spaces. */
function hostList(env: Env, name: string): string[] {
  const hosts = (optional(env, name) ?? '').split(/[\s,]+/).filter((host) => host !== '');
  const bad = hosts.find((host) => !/^[a-z0-9.-]+(:\d+)?$/i.test(host));
  if (bad !== undefined) throw new ConfigError(`${name} must list host names such as tiles.example.org, not "${bad}"`);
  return hosts.map((host) => host.toLowerCase());
}

/** STEWARD_OIDC_*: undefined without an issuer; the issuer needs an audience and access control on. */
function oidc(env: Env): OidcSettings | undefined {
  const issuer = optional(env, 'STEWARD_OIDC_ISSUER');
  if (issuer === undefined) return undefined;
  if (!URL.canParse(issuer) || !['https:', 'http:'].includes(new URL(issuer).protocol))
    throw new ConfigError(`STEWARD_OIDC_ISSUER must be the issuer's https:// URL, not "${issuer}"`);
  if (optional(env, 'STEWARD_API_TOKEN') === undefined)
    throw new ConfigError('STEWARD_OIDC_ISSUER needs STEWARD_API_TOKEN: access control is on only with it');
  return {
    issuer,
    audience: required(env, 'STEWARD_OIDC_AUDIENCE'),
    rolesClaim: optional(env, 'STEWARD_OIDC_ROLES_CLAIM') ?? 'roles',
    nameClaim: optional(env, 'STEWARD_OIDC_NAME_CLAIM'),
    clientId: optional(env, 'STEWARD_OIDC_CLIENT_ID'),
    scope: optional(env, 'STEWARD_OIDC_SCOPE') ?? 'openid profile',
  };
}

function dataRoots(env: Env): string[] | undefined {
  const text = optional(env, 'STEWARD_DATA_ROOTS');
  if (text === undefined) return undefined;
  const roots = text.split(':').filter((root) => root !== '');
  const relative = roots.find((root) => !root.startsWith('/'));
  if (relative !== undefined) throw new ConfigError(`STEWARD_DATA_ROOTS must hold absolute folders, not "${relative}"`);
  return roots;
}

const MIB = 1024 * 1024;

/** `STEWARD_UPLOAD_ROOT`: an absolute folder, inside STEWARD_DATA_ROOTS when they are set. */
function uploadRoot(env: Env, roots: string[] | undefined): string | undefined {
  const root = optional(env, 'STEWARD_UPLOAD_ROOT')?.replace(/(.)\/+$/, '$1');
  if (root === undefined) return undefined;
  if (!root.startsWith('/')) throw new ConfigError(`STEWARD_UPLOAD_ROOT must be an absolute folder, not "${root}"`);
  const within = (folder: string): boolean =>
    root === folder || root.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
  if (roots !== undefined && !roots.some(within)) {
    throw new ConfigError(
      `STEWARD_UPLOAD_ROOT (${root}) must lie inside one of STEWARD_DATA_ROOTS (${roots.join(':')})`,
    );
  }
  return root;
}

/** A size setting: bytes, or with a K, M or G suffix (KiB, MiB, GiB); `minimum` bytes at least. */
function size(env: Env, name: string, fallback: string, minimum = 1): number {
  const text = optional(env, name) ?? fallback;
  const match = /^(\d+)\s*([KMG]?)i?B?$/i.exec(text);
  const unit = { '': 1, K: 1024, M: MIB, G: 1024 * MIB }[(match?.[2] ?? '').toUpperCase()];
  const value = match && unit !== undefined ? Number(match[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new ConfigError(`${name} must be a size in bytes such as 16777216 or 16M, not "${text}"`);
  }
  return value;
}

/**
 * `STEWARD_UPLOAD_BUDGET`: bytes of style documents read at once, 24M by default. Reading a QML
 * takes about ten times its size of heap, so the default keeps the largest upload (16 MiB) and a
 * few small ones within the heap's headroom; it must take one upload of the largest size.
 */
function uploadBudget(env: Env): number {
  const budget = size(env, 'STEWARD_UPLOAD_BUDGET', '24M');
  const largest = size(env, 'STEWARD_STYLE_BODY_LIMIT', '16M');
  if (budget < largest) {
    throw new ConfigError(
      `STEWARD_UPLOAD_BUDGET (${budget}) must take one upload of STEWARD_STYLE_BODY_LIMIT (${largest})`,
    );
  }
  return budget;
}

/** A whole-number setting from 1 to `max`. */
function count(env: Env, name: string, fallback: number, max: number): number {
  const text = optional(env, name) ?? String(fallback);
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new ConfigError(`${name} must be a whole number from 1 to ${max}, not "${text}"`);
  }
  return value;
}

/** `STEWARD_JOBS_CONCURRENCY`: a positive whole number, by default the number of cores. */
function jobsConcurrency(env: Env): number {
  const text = optional(env, 'STEWARD_JOBS_CONCURRENCY');
  if (text === undefined) return availableParallelism();
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(`STEWARD_JOBS_CONCURRENCY must be a whole number of at least 1, not "${text}"`);
  }
  return value;
}

/** Where Debian's libpq looks for the system-wide service file when PGSYSCONFDIR is not set. */
const DEFAULT_SYSCONFDIR = '/etc/postgresql-common';

/** The service files libpq reads, in its order: the user's file, then the system's. */
export function serviceFiles(env: Env): string[] {
  const user = env['PGSERVICEFILE'] || join(env['HOME'] || homedir(), '.pg_service.conf');
  const system = join(env['PGSYSCONFDIR'] || DEFAULT_SYSCONFDIR, 'pg_service.conf');
  return [user, system];
}

/**
 * libpq's settings, and the QGIS ones Steward relies on, that a QGIS Server process reads while it
 * serves a request (to open a database project or layer). qgis_mapserv.fcgi sees, during a request,
 * only that request's FastCGI parameters as its environment (libfcgi swaps `environ`), so whoever
 * sends it requests (nginx, the API) must send these as parameters; its start environment is not read.
 */
const LIBPQ_SETTINGS = [
  'PGSERVICEFILE',
  'PGSYSCONFDIR',
  'PGPASSFILE',
  'PGSSLMODE',
  'PGSSLROOTCERT',
  'PGSSLCERT',
  'PGSSLKEY',
  'PGCONNECT_TIMEOUT',
];
const QGIS_REQUEST_SETTING = /^(QGIS_SERVER_[A-Z0-9_]+|QGIS_AUTH_DB_DIR_PATH|QGIS_AUTH_PASSWORD_FILE)$/;

/**
 * GDAL's settings for the GeoPackages (SQLite) QGIS Server opens, read as each is opened, so during
 * a request (docs/datasources.md, "GeoPackages and the pool"), and their defaults. QGIS reads a
 * GeoPackage without file locks (NOLOCK); without OGR_SQLITE_JOURNAL it switches the file to WAL
 * when it opens it for writing (a FILTER, a WFS-T edit), after which the other processes that had
 * read it answer "unable to open database file". DELETE leaves the journal as it is. SQLite has one
 * writer at a time and answers "database is locked" at once unless told to wait: busy_timeout
 * (milliseconds) has a process that writes, or reads a file opened for writing, wait for another's.
 */
export const QGIS_REQUEST_DEFAULTS: Readonly<Record<string, string>> = {
  OGR_SQLITE_JOURNAL: 'DELETE',
  OGR_SQLITE_PRAGMA: 'busy_timeout=5000',
};

/**
 * Which of LIBPQ_SETTINGS, QGIS_SERVER_* and QGIS_REQUEST_DEFAULTS `env` sets (those defaults
 * unless it sets them, an empty value leaving one out), as FastCGI parameters, in name order.
 */
export function qgisRequestSettings(env: Env): Array<[string, string]> {
  return Object.entries({ ...QGIS_REQUEST_DEFAULTS, ...env })
    .filter((entry): entry is [string, string] => {
      const [name, value] = entry;
      return value !== undefined && value !== '' && isRequestSetting(name);
    })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function isRequestSetting(name: string): boolean {
  return LIBPQ_SETTINGS.includes(name) || name in QGIS_REQUEST_DEFAULTS || QGIS_REQUEST_SETTING.test(name);
}

/** The environment of a child process: this process's over `defaults`, with `overrides` on top. */
export function childEnvironment(overrides: Env = {}, defaults: Env = {}): NodeJS.ProcessEnv {
  return { ...defaults, ...process.env, ...overrides };
}

/** `STEWARD_PROJECT_CACHE_MB`: MiB of parsed projects kept in memory, 128 by default. */
function projectCacheBytes(env: Env): number {
  const text = optional(env, 'STEWARD_PROJECT_CACHE_MB') ?? '128';
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 1024 * 1024) {
    throw new ConfigError(`STEWARD_PROJECT_CACHE_MB must be a whole number of MiB from 1 to 1048576, not "${text}"`);
  }
  return value * MIB;
}

/** `STEWARD_HISTORY_VERSIONS` (1000, 0 records none) and `STEWARD_HISTORY_DAYS` (90): the versions kept of each project. */
function history(env: Env): { versions: number; days: number } {
  const count = (name: string, fallback: string, least: number): number => {
    const text = optional(env, name) ?? fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < least || value > 1_000_000) {
      throw new ConfigError(`${name} must be a whole number from ${least} to 1000000, not "${text}"`);
    }
    return value;
  };
  return { versions: count('STEWARD_HISTORY_VERSIONS', '1000', 0), days: count('STEWARD_HISTORY_DAYS', '90', 1) };
}

/** The V8 heap the service allows itself beyond its cache of parsed projects, by default. */
export const HEAP_HEADROOM_MB = 256;

/**
 * `STEWARD_HEAP_MB`: MiB of V8 old generation the API process bounds itself to; by default
 * `STEWARD_PROJECT_CACHE_MB` plus HEAP_HEADROOM_MB. `0` leaves Node's own bound (a quarter of the
 * machine's memory, up to 4 GiB), which V8 fills with garbage long before it collects it.
 * Undefined when Node's bound is kept.
 */
export function heapBoundMb(env: Env = process.env): number | undefined {
  const cacheMb = projectCacheBytes(env) / MIB;
  const text = optional(env, 'STEWARD_HEAP_MB') ?? String(cacheMb + HEAP_HEADROOM_MB);
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 1024 * 1024) {
    throw new ConfigError(`STEWARD_HEAP_MB must be a whole number of MiB from 0 to 1048576, not "${text}"`);
  }
  if (value > 0 && value < cacheMb) {
    throw new ConfigError(
      `STEWARD_HEAP_MB (${value}) must leave room for STEWARD_PROJECT_CACHE_MB (${cacheMb}), or be 0 for Node's own bound`,
    );
  }
  return value === 0 ? undefined : value;
}

/** STEWARD_PINNED_PROJECTS: project names separated by commas; each must be a valid name. */
function pinnedProjects(env: Env): string[] {
  return (optional(env, 'STEWARD_PINNED_PROJECTS') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** STEWARD_QGISSERVER_VERSION: `3.40`, `3.44.15`; a release name after a hyphen is dropped (the version goes into headers). */
function qgisServerVersion(env: Env): string | undefined {
  const text = optional(env, 'STEWARD_QGISSERVER_VERSION');
  if (text === undefined) return undefined;
  const version = /^(\d{1,3}\.\d{1,3}(?:\.\d{1,3})?)(?:-.*)?$/su.exec(text)?.[1];
  if (version === undefined) {
    throw new ConfigError(`STEWARD_QGISSERVER_VERSION must be a QGIS version such as 3.40 or 3.44.15, not "${text}"`);
  }
  return version;
}

/** Splits `host:port` (IPv6 as `[::1]:5000`); a bare port listens on all interfaces. */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text) ?? /^()()(\d+)$/.exec(text);
  if (!match) throw new ConfigError(`STEWARD_LISTEN must look like HOST:PORT, not "${text}"`);
  const host = match[1] || match[2] || '0.0.0.0';
  return { host, port: port('STEWARD_LISTEN', match[3] ?? '') };
}

export function loadConfig(env: Env = process.env): Config {
  const monitoringPort = optional(env, 'STEWARD_QGISSERVER_MONITORING_PORT');
  return {
    qgisServerUrl: qgisServerUrl(env),
    publicOwsUrl: publicOwsUrl(env),
    qgisServerFcgi: qgisServerFcgi(env),
    qgisRequestSettings: qgisRequestSettings(env),
    projectsDir: required(env, 'STEWARD_QGISSERVER_PROJECTS_DIR'),
    logLevel: logLevel(env),
    listen: parseListen(optional(env, 'STEWARD_LISTEN') ?? '0.0.0.0:5000'),
    psqlService: optional(env, 'STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE'),
    pgServiceFiles: serviceFiles(env),
    monitoringPort:
      monitoringPort === undefined ? undefined : port('STEWARD_QGISSERVER_MONITORING_PORT', monitoringPort),
    monitoringToken: optional(env, 'STEWARD_MONITORING_TOKEN'),
    mapproxyProjectsDir: optional(env, 'STEWARD_MAPPROXY_PROJECTS_DIR'),
    mapproxyUrl: optional(env, 'STEWARD_MAPPROXY_URL'),
    cacheS3Bucket: optional(env, 'STEWARD_MAPPROXY_CACHE_S3_BUCKET'),
    cacheS3Dir: optional(env, 'STEWARD_MAPPROXY_CACHE_S3_DIR') ?? '/mapproxy/cache',
    s3: readS3Settings(env),
    apiToken: optional(env, 'STEWARD_API_TOKEN'),
    oidc: oidc(env),
    dataRoots: dataRoots(env),
    uploadRoot: uploadRoot(env, dataRoots(env)),
    publishBodyLimit: size(env, 'STEWARD_PUBLISH_BODY_LIMIT', '512M'),
    allowIndirectDatasources: flag(env, 'STEWARD_ALLOW_INDIRECT_DATASOURCES'),
    styleRemoteHosts: hostList(env, 'STEWARD_STYLE_REMOTE_HOSTS'),
    styleBodyLimit: size(env, 'STEWARD_STYLE_BODY_LIMIT', '16M'),
    tokenFailures: count(env, 'STEWARD_TOKEN_FAILURES', 10, 1_000_000),
    bodyIdleSeconds: count(env, 'STEWARD_BODY_IDLE_SECONDS', 30, 3600),
    uploadBudget: uploadBudget(env),
    processingOutputLimit: size(env, 'STEWARD_PROCESSING_OUTPUT_LIMIT', '8G'),
    minFreeSpace: size(env, 'STEWARD_MIN_FREE_SPACE', '512M', 0),
    jobsConcurrency: jobsConcurrency(env),
    projectCacheBytes: projectCacheBytes(env),
    pinnedProjects: pinnedProjects(env),
    qgisServerVersion: qgisServerVersion(env),
    history: history(env),
    basemaps: readBasemaps(env, (message) => new ConfigError(message)),
  };
}
