/** The few calls the `steward` command makes to the Steward API, with errors as one readable line. */
import type { AuditEntry, RoleDefinition } from '../access/records.js';
import type { PublicToken as TokenInfo } from '../access/service.js';
import type { InstanceReload } from '../insight/project-fleet.js';
import type { InstanceSummary } from '../monitor/connection.js';
import type {
  InstanceAbout,
  InstanceLogs,
  InstanceMetadata,
  InstanceProjects,
  InstanceStats,
} from '../monitor/protocol.js';
import type { Pin } from '../services/pins.js';

const REQUEST_TIMEOUT_MS = 10_000;
/** Uploads and downloads of projects with their data take as long as their bytes do. */
const TRANSFER_TIMEOUT_MS = 30 * 60_000;

/** An upload's bytes as they are read, how many there are, and what is told how many have been sent. */
export interface Upload {
  body: AsyncIterable<Uint8Array>;
  length: number;
  sent: (bytes: number) => void;
}

/** An archive being downloaded: its bytes as they arrive, and how many there are when the server said. */
export interface Download {
  body: AsyncIterable<Uint8Array>;
  length: number | undefined;
}

/** A failure to report on one line of stderr, exiting with 1. */
export class CliError extends Error {}

/** The API itself could not be reached, as opposed to answering with an error. */
export class Unreachable extends CliError {}

/** The API answered with an error status: its sentence, followed by its code (docs/errors.md) when it gave one. */
export class HttpError extends CliError {
  constructor(
    readonly status: number,
    sentence: string,
    readonly code?: string,
  ) {
    super(code === undefined ? sentence : `${sentence} [${code}]`);
  }
}

/** The answer of GET /api/projects/{project}/check, as far as the command prints it. */
export interface ProjectCheck {
  status: 'ok' | 'degraded' | 'broken';
  layers: { name: string; status: string; findings: { kind: string; message: string }[] }[];
  findings: { kind: string; message: string }[];
}

/** A job as GET /api/jobs/{id} answers it, as far as the command prints it. */
export interface Job {
  id: string;
  kind: string;
  project: string;
  state: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  progress: number;
  done: number;
  total: number;
  created: string;
  started: string | null;
  error: string | null;
  result?: Record<string, unknown>;
}

/** What POST /api/datasources/postgres/import takes. */
export interface ImportRequest {
  service: string;
  schema: string;
  table: string;
  source: string;
  layer?: string;
  crs?: string;
  mode: 'create' | 'overwrite' | 'append';
}

/** A node of GET /api/projects/{project}/tree, as far as the command prints it. */
export interface TreeNode {
  type: 'layer' | 'group';
  name: string;
  visible: boolean;
  title?: string;
  short_name?: string;
  mutually_exclusive?: boolean;
  embedded?: boolean;
  children?: TreeNode[];
}

/** The answer of GET /api/projects/{project}/tree. */
export interface LayerTree {
  children: TreeNode[];
  order?: string[];
}

/** A version of a project as GET /api/projects/{project}/versions lists it. */
export interface ProjectVersion {
  id: string;
  time: string;
  who: string;
  route: string;
  summary: string;
}

/** The answer of GET /api/whoami. */
export interface Whoami {
  name: string;
  roles: string[];
  admin: boolean;
  /** How the server knew the identity: bootstrap, token, oidc (a JWT of its OpenID provider), anonymous, open. */
  kind: string;
}

/** The answer of POST /api/tokens. */
export interface CreatedToken {
  id: string;
  token: string;
  name: string;
  roles: string[];
  expires: string | null;
}

/** The URL of a server as given (STEWARD_SERVER_URL, `steward login URL`), with a trailing `/`. */
export function serverUrl(text: string, what: string): URL {
  if (!URL.canParse(text)) throw new CliError(`${what} is not a URL: ${text}`);
  const url = new URL(text.endsWith('/') ? text : `${text}/`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`${what} is not an http(s) URL: ${text}`);
  return url;
}

/** The answer of PUT /api/projects/{project}/archive, as far as the command prints it. */
export interface Published {
  created: boolean;
  etag: string;
  data_dir?: string;
  data_files: string[];
  check: ProjectCheck;
}

export class StewardApi {
  private constructor(
    private readonly baseUrl: URL,
    private readonly token: string | undefined,
  ) {}

  /** The API at `server` (serverUrl's), sending `token` as a bearer token when given. */
  static at(server: URL, token: string | undefined): StewardApi {
    return new StewardApi(server, token);
  }

  /** The URL of the server, with a trailing `/`. */
  get server(): string {
    return this.baseUrl.href;
  }

  whoami(): Promise<Whoami> {
    return this.get('api/whoami');
  }

  tokens(): Promise<TokenInfo[]> {
    return this.get('api/tokens');
  }

  /** Makes a token; its secret is in the answer, and never again. */
  createToken(body: { name: string; roles: string[]; expires?: string }): Promise<CreatedToken> {
    return this.send('api/tokens', body);
  }

  async revokeToken(id: string): Promise<void> {
    await this.request(`api/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }

  roles(): Promise<Record<string, RoleDefinition>> {
    return this.get('api/roles');
  }

  role(name: string): Promise<RoleDefinition> {
    return this.get(`api/roles/${encodeURIComponent(name)}`);
  }

  /** Makes or replaces a role; true when it is new. */
  async putRole(name: string, role: unknown): Promise<boolean> {
    const response = await this.fetch(new URL(`api/roles/${encodeURIComponent(name)}`, this.baseUrl), {
      method: 'PUT',
      body: role,
    });
    await answerOf(response);
    return response.status === 201;
  }

  async removeRole(name: string): Promise<void> {
    await this.request(`api/roles/${encodeURIComponent(name)}`, { method: 'DELETE' });
  }

  /** The audit log, newest first, as `filter` (GET /api/audit's query) narrows it. */
  audit(filter: Record<string, string>): Promise<AuditEntry[]> {
    return this.get(withQuery('api/audit', filter));
  }

  async instances(): Promise<InstanceSummary[]> {
    return (await this.get<{ servers: InstanceSummary[] }>('api/instances')).servers;
  }

  metadata(id: string): Promise<InstanceMetadata> {
    return this.get(`api/instances/${encodeURIComponent(id)}`);
  }

  logs(id: string): Promise<InstanceLogs> {
    return this.get(`api/instances/${encodeURIComponent(id)}/logs`);
  }

  stats(id: string): Promise<InstanceStats> {
    return this.get(`api/instances/${encodeURIComponent(id)}/stats`);
  }

  projects(id: string): Promise<InstanceProjects> {
    return this.get(`api/instances/${encodeURIComponent(id)}/projects`);
  }

  about(id: string): Promise<InstanceAbout> {
    return this.get(`api/instances/${encodeURIComponent(id)}/about`);
  }

  /** Has every connected instance load the project again; one answer per instance. */
  async reload(project: string, schema?: string): Promise<InstanceReload[]> {
    const path = projectPath(project, 'reload', schema);
    return (await this.send<{ instances: InstanceReload[] }>(path, {})).instances;
  }

  /** Pins the project; every connected instance loads it now, one answer each. */
  async pin(project: string, schema?: string): Promise<InstanceReload[]> {
    const path = projectPath(project, 'pin', schema);
    return (await this.request<{ instances: InstanceReload[] }>(path, { method: 'PUT' })).instances;
  }

  async unpin(project: string, schema?: string): Promise<void> {
    await this.request(projectPath(project, 'pin', schema), { method: 'DELETE' });
  }

  async pins(): Promise<Pin[]> {
    return (await this.get<{ pins: Pin[] }>('api/pins')).pins;
  }

  /** The check of one project, or of every project of the schema by name. */
  check(project: string, schema?: string): Promise<ProjectCheck>;
  check(project: undefined, schema?: string): Promise<Record<string, ProjectCheck>>;
  check(project?: string, schema?: string): Promise<ProjectCheck | Record<string, ProjectCheck>> {
    return this.get(project === undefined ? withSchema('api/checks', schema) : projectPath(project, 'check', schema));
  }

  tree(project: string, schema?: string): Promise<LayerTree> {
    return this.get(projectPath(project, 'tree', schema));
  }

  jobs(): Promise<Job[]> {
    return this.get('api/jobs');
  }

  job(id: string): Promise<Job> {
    return this.get(`api/jobs/${encodeURIComponent(id)}`);
  }

  /** Starts seeding the project's cache (POST .../cache/seed); resolves to the new job. */
  seed(project: string, body: { min_zoom: number; max_zoom: number }, schema?: string): Promise<Job> {
    return this.send(projectPath(project, 'cache/seed', schema), body);
  }

  /** Starts importing a vector layer into a PostGIS table; resolves to the new job. */
  importIntoPostgres(body: ImportRequest): Promise<Job> {
    return this.send('api/datasources/postgres/import', body);
  }

  /** A page of the project's versions, newest first; `next` is the `before` of the following page. */
  versions(
    project: string,
    page: { limit?: number; before?: string },
    schema?: string,
  ): Promise<{ versions: ProjectVersion[]; next: string | null }> {
    const query = {
      ...(page.limit !== undefined && { limit: String(page.limit) }),
      ...(page.before && { before: page.before }),
    };
    return this.get(withQuery(projectPath(project, 'versions', schema), query));
  }

  /** Makes a new version of the project equal to `version`; resolves to the new version. */
  restore(project: string, version: string, force: boolean, schema?: string): Promise<ProjectVersion> {
    const path = projectPath(project, `versions/${encodeURIComponent(version)}/restore`, schema);
    return this.send(withQuery(path, force ? { force: 'true' } : {}), undefined);
  }

  /** Publishes a .qgs, .qgz or zip bundle as the project (PUT .../archive), sent as `upload` reads it. */
  async publish(
    project: string,
    upload: Upload,
    options: { replace: boolean; allowBroken: boolean; schema?: string | undefined },
  ): Promise<Published> {
    const query = {
      ...(options.replace && { replace: 'true' }),
      ...(options.allowBroken && { allow_broken: 'true' }),
    };
    const path = withQuery(projectPath(project, 'archive', options.schema), query);
    const response = await this.fetch(new URL(path, this.baseUrl), { method: 'PUT', upload });
    return answerOf<Published>(response);
  }

  /** The project as a .qgz, or with `data` a zip of it and its data files (GET .../archive), as it arrives. */
  async download(project: string, data: boolean, schema?: string): Promise<Download> {
    const path = withQuery(projectPath(project, 'archive', schema), data ? { data: 'true' } : {});
    const response = await this.fetch(new URL(path, this.baseUrl), {});
    if (!response.ok || response.body === null) return answerOf<never>(response);
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    return { body: response.body, length: Number.isSafeInteger(length) ? length : undefined };
  }

  private get<T>(path: string): Promise<T> {
    return this.request<T>(path);
  }

  private send<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>(path, { method: 'POST', body });
  }

  /** GET by default; a JSON body when there is one. */
  private async request<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
    return answerOf<T>(await this.fetch(new URL(path, this.baseUrl), init));
  }

  /** `upload`: bytes sent as they are, counted as they go, with the longer timeout of transfers. */
  private async fetch(
    url: URL,
    { method = 'GET', body, upload }: { method?: string; body?: unknown; upload?: Upload },
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers['authorization'] = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (upload !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      headers['content-length'] = String(upload.length);
    }
    const payload =
      upload !== undefined
        ? { body: counted(upload), duplex: 'half' as const }
        : body === undefined
          ? {}
          : { body: JSON.stringify(body) };
    const timeout = url.pathname.endsWith('/archive') ? TRANSFER_TIMEOUT_MS : REQUEST_TIMEOUT_MS;
    try {
      return await fetch(url, { method, headers, ...payload, signal: AbortSignal.timeout(timeout) });
    } catch (error) {
      throw new Unreachable(`Cannot reach the Steward server at ${this.baseUrl.href}: ${reason(error)}`);
    }
  }
}

/** The upload's bytes as a stream, `sent` told the count as each piece is taken by the connection. */
function counted({ body, sent }: Upload): ReadableStream<Uint8Array> {
  const pieces = body[Symbol.asyncIterator]();
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      const next = await pieces.next();
      if (next.done === true) return controller.close();
      controller.enqueue(next.value);
      at += next.value.byteLength;
      sent(at);
    },
    async cancel() {
      await pieces.return?.();
    },
  });
}

/** The path of a project route; `schema` (PostgreSQL storage) is left to the API's default when not given. */
function projectPath(project: string, rest: string, schema: string | undefined): string {
  return withSchema(`api/projects/${encodeURIComponent(project)}/${rest}`, schema);
}

function withSchema(path: string, schema: string | undefined): string {
  return schema === undefined ? path : `${path}?${new URLSearchParams({ schema }).toString()}`;
}

/** The path with `query` added to the query it has. */
function withQuery(path: string, query: Record<string, string>): string {
  const extra = new URLSearchParams(query).toString();
  if (extra === '') return path;
  return `${path}${path.includes('?') ? '&' : '?'}${extra}`;
}

/** The JSON answer of a success; HttpError with the API's message otherwise. */
async function answerOf<T>(response: Response): Promise<T> {
  const answer: unknown = await response.json().catch(() => undefined);
  if (response.ok) return answer as T;
  const sentence = errorField(answer, 'error') ?? `${response.url} answered HTTP ${response.status}`;
  throw new HttpError(response.status, sentence, errorField(answer, 'code'));
}

/** A text field of an error answer (`error`, `code`), if the answer has it. */
function errorField(body: unknown, field: 'error' | 'code'): string | undefined {
  if (typeof body !== 'object' || body === null || !(field in body)) return undefined;
  const value: unknown = (body as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

/** fetch() hides the system error (ECONNREFUSED, ENOTFOUND...) in `cause`. */
function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  return error.name === 'TimeoutError' ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} seconds` : error.message;
}
