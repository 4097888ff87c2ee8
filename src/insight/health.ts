/**
 * Readiness: whether each engine Steward depends on answers now. Every check runs at each call,
 * bounded by a timeout, so a probe that hangs (a stopped database, a frozen QGIS Server) reports
 * that engine down instead of holding the answer.
 */
import { type InstanceRegistry } from '../monitor/registry.js';
import { accepts } from '../runtime/ports.js';
import { type DiskSpace, diskSpace, formatBytes } from '../storage/disk-space.js';
import { type ProjectStore } from '../storage/project-store.js';

const CHECK_TIMEOUT_MS = 5000;

export interface CheckResult {
  ok: boolean;
  /** What was checked and what it answered. */
  detail: string;
}

export interface Readiness {
  status: 'ok' | 'down';
  checks: Record<string, CheckResult>;
}

export interface HealthOptions {
  store: ProjectStore;
  qgisServerUrl: string;
  /** The schema whose first project QGIS Server is asked for (filesystem stores ignore it). */
  schema: string;
  /** Undefined when the tile cache is off; `url` undefined when Steward does not know where MapProxy listens. */
  mapproxy?: { url: string | undefined };
  registry?: InstanceRegistry;
  monitoringHost?: string;
  /** Folders Steward writes to, whose disks must each keep `minFree` bytes free. */
  disks?: { folders: string[]; minFree: number };
  /** STEWARD_API_TOKEN: nginx asks Steward about each request to QGIS Server, which must get through. */
  apiToken?: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function bounded(what: string, work: () => Promise<string>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} seconds`)),
      CHECK_TIMEOUT_MS,
    );
  });
  try {
    return { ok: true, detail: await Promise.race([work(), timeout]) };
  } catch (error) {
    return { ok: false, detail: `${what}: ${message(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

/** `fetch` reports a refused connection as "fetch failed" with the reason in `cause`. */
function fetchFailure(error: unknown): Error {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
  return new Error(cause || message(error));
}

async function get(url: string, token?: string): Promise<{ status: number; text: string }> {
  try {
    const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
    const response = await fetch(url, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS), ...(headers && { headers }) });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    throw fetchFailure(error);
  }
}

export class HealthChecks {
  constructor(private readonly options: HealthOptions) {}

  async ready(): Promise<Readiness> {
    const entries: [string, Promise<CheckResult>][] = [
      ['storage', bounded(`${this.options.store.kind} storage`, () => this.storage())],
      ['qgis_server', bounded('QGIS Server', () => this.qgisServer())],
    ];
    if (this.options.mapproxy) entries.push(['mapproxy', bounded('MapProxy', () => this.mapproxy())]);
    if (this.options.registry) entries.push(['monitoring', bounded('monitoring port', () => this.monitoring())]);
    if (this.options.disks) entries.push(['disk', bounded('disk space', () => this.disks())]);
    const results = await Promise.all(entries.map(async ([name, check]) => [name, await check] as const));
    const checks: Record<string, CheckResult> = Object.fromEntries(results);
    const down = results.some(([, check]) => !check.ok);
    return { status: down ? 'down' : 'ok', checks };
  }

  private async storage(): Promise<string> {
    await this.options.store.probe();
    return this.options.store.kind === 'filesystem' ? 'projects folder writable' : 'database reachable';
  }

  /**
   * GetCapabilities of the first stored project. QGIS Server answers an OGC document (capabilities
   * or an exception for a project it refuses: the server itself works, the project check reports
   * the project); without any project, any HTTP answer shows the server is up. A database project
   * it refuses is a failure: Steward reads that database (the storage check), so QGIS Server lacks
   * the settings to reach it (a FastCGI process reads libpq's settings from each request's
   * parameters, not from its environment: docs/storage.md).
   */
  private async qgisServer(): Promise<string> {
    const [project] = await this.options.store.list(this.options.schema);
    const url = new URL(this.options.qgisServerUrl);
    if (project === undefined) {
      const { status } = await get(url.href, this.options.apiToken);
      return `answers HTTP (${status}); no project to ask for`;
    }
    url.searchParams.set('MAP', await this.options.store.mapParameter({ name: project, schema: this.options.schema }));
    for (const [name, value] of Object.entries({ SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' })) {
      url.searchParams.set(name, value);
    }
    const { status, text } = await get(url.href, this.options.apiToken);
    if (text.includes('WMS_Capabilities')) return `GetCapabilities of project ${project} answered`;
    // A project QGIS Server refuses: an OGC ServiceExceptionReport, or its own ServerException (with 500).
    const refusal = /<Serv(?:ice|er)Exception[^>]*>([^<]*)/.exec(text);
    if (refusal && this.options.store.kind === 'postgresql') {
      throw new Error(`cannot open database project ${project}: ${refusal[1]?.trim() || `answered ${status}`}`);
    }
    if (refusal) return `answers, but refuses project ${project} (see its check)`;
    throw new Error(`GetCapabilities of project ${project} answered ${status} without a WMS document`);
  }

  /** Free space on each disk written to, once per mount; fails naming those under the threshold. */
  private async disks(): Promise<string> {
    const { folders, minFree } = this.options.disks ?? { folders: [], minFree: 0 };
    const spaces = new Map<string, DiskSpace>();
    for (const space of await Promise.all(folders.map((folder) => diskSpace(folder)))) spaces.set(space.mount, space);
    const described = [...spaces.values()].map(({ mount, free }) => `${mount} has ${formatBytes(free)} free`);
    const short = [...spaces.values()].filter(({ free }) => free < minFree);
    if (short.length > 0) {
      const mounts = short.map(({ mount }) => mount).join(', ');
      throw new Error(`${described.join('; ')}: under ${formatBytes(minFree)} (STEWARD_MIN_FREE_SPACE) on ${mounts}`);
    }
    return described.join('; ');
  }

  private async mapproxy(): Promise<string> {
    const url = this.options.mapproxy?.url;
    if (url === undefined) return 'not asked: STEWARD_MAPPROXY_URL is not set';
    const { status } = await get(url);
    if (status >= 500) throw new Error(`${url} answered ${status}`);
    return `${url} answered ${status}`;
  }

  private async monitoring(): Promise<string> {
    const registry = this.options.registry;
    if (!registry) return 'disabled';
    const port = registry.port;
    const host = this.options.monitoringHost === '0.0.0.0' ? '127.0.0.1' : (this.options.monitoringHost ?? '127.0.0.1');
    if (!(await accepts(host, port))) throw new Error(`port ${port} does not accept connections`);
    return `listening on port ${port}, ${registry.list().length} instance(s) connected`;
  }
}
