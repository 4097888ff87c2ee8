/** Messages of the monitoring protocol (docs/monitoring-protocol.md) and the shapes of their results. */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export const PROTOCOL_VERSION = 1;

export const Hello = Type.Object({
  type: Type.Literal('hello'),
  version: Type.Integer(),
  token: Type.Optional(Type.String()),
  hostname: Type.Optional(Type.String()),
  pid: Type.Optional(Type.Integer()),
  /** The instance's QGIS version, `3.40.6` (older plugins: Qgis.QGIS_VERSION, `3.40.6-Bratislava`). */
  qgis_version: Type.Optional(Type.String({ maxLength: 200 })),
  /** Its release name, `Bratislava`. */
  qgis_release: Type.Optional(Type.String({ maxLength: 200 })),
});
export type Hello = Static<typeof Hello>;

const Reply = Type.Union([
  Type.Object({ id: Type.Integer(), result: Type.Unknown() }),
  Type.Object({ id: Type.Integer(), error: Type.String() }),
]);
export type Reply = Static<typeof Reply>;

export const InstanceMetadata = Type.Object({
  cache: Type.Object({ projects: Type.Array(Type.String()) }),
  plugins: Type.Array(Type.String()),
  providers: Type.Array(Type.String()),
  versions: Type.Object({
    gdal: Type.String(),
    python: Type.String(),
    qt: Type.String(),
    qgis: Type.String({ description: '3.40.6 (older plugins: 3.40.6-Bratislava)' }),
    qgis_release: Type.Optional(Type.String({ description: 'The release name, Bratislava' })),
  }),
});
export type InstanceMetadata = Static<typeof InstanceMetadata>;

export const InstanceLogs = Type.Object({
  lines: Type.Array(Type.String()),
  next: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'The cursor to ask with next (`since`); absent from plugins older than cursors, which answer every line kept',
    }),
  ),
});
export type InstanceLogs = Static<typeof InstanceLogs>;

export const InstanceStats = Type.Object({
  count: Type.Integer({ description: 'Requests served since the instance started' }),
  service: Type.String({ description: 'Of the request in flight, or else the last one' }),
  request: Type.String(),
  project: Type.String(),
  duration: Type.Integer({ description: 'Milliseconds, so far for a request in flight' }),
  failures: Type.Optional(Type.Integer({ description: 'Requests answered with an error since the instance started' })),
  busy_ms: Type.Optional(Type.Integer({ description: 'Milliseconds spent serving the requests counted' })),
  requests: Type.Optional(
    Type.Record(Type.String(), Type.Integer(), { description: 'Requests served by REQUEST value (GetMap, ...)' }),
  ),
});
export type InstanceStats = Static<typeof InstanceStats>;

/** `invalidate` (params `{map}`): the instance queued the project to drop from its cache. */
export const InvalidateResult = Type.Literal(true);

export const CachedProject = Type.Object({
  map: Type.String({ description: 'The MAP value: a .qgs path or a postgresql: URI' }),
  title: Type.String(),
  loaded: Type.String({ description: 'When the instance loaded it (ISO 8601, UTC)' }),
  layers: Type.Integer(),
  invalid_layers: Type.Array(Type.String(), { description: 'Names of the layers QGIS Server holds as not valid' }),
});
export type CachedProject = Static<typeof CachedProject>;

export const InstanceProjects = Type.Object({ projects: Type.Array(CachedProject) });
export type InstanceProjects = Static<typeof InstanceProjects>;

const SettingSource = Type.Union([Type.Literal('environment'), Type.Literal('ini'), Type.Literal('default')]);

export const InstanceAbout = Type.Object({
  settings: Type.Object({
    ini_file: Type.String({ description: "QGIS's ini file the instance reads settings from" }),
    values: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The environment variable of the setting' }),
        value: Type.Union([Type.Boolean(), Type.Number(), Type.String()]),
        source: SettingSource,
      }),
    ),
  }),
  fonts: Type.Array(Type.String(), { description: 'Font families QGIS Server can draw with' }),
  process: Type.Object({
    pid: Type.Integer(),
    memory_bytes: Type.Integer({ description: 'Resident memory' }),
    peak_memory_bytes: Type.Integer(),
    uptime_seconds: Type.Integer(),
    load: Type.Object({ '1m': Type.Number(), '5m': Type.Number(), '15m': Type.Number() }),
    cpus: Type.Integer(),
  }),
});
export type InstanceAbout = Static<typeof InstanceAbout>;

/** `reload` (params `{map}`): the instance dropped the project and loaded it again, or will. */
export const ReloadResult = Type.Object({
  map: Type.String(),
  status: Type.Union([
    Type.Literal('reloaded'),
    Type.Literal('refused'),
    Type.Literal('pending'),
    Type.Literal('failed'),
  ]),
  project: Type.Optional(Type.Union([CachedProject, Type.Null()])),
  error: Type.Optional(Type.String()),
});
export type ReloadResult = Static<typeof ReloadResult>;

export const methodResults = {
  metadata: InstanceMetadata,
  logs: InstanceLogs,
  stats: InstanceStats,
  invalidate: InvalidateResult,
  projects: InstanceProjects,
  about: InstanceAbout,
  reload: ReloadResult,
} as const;
export type Method = keyof typeof methodResults;
export type MethodResult<M extends Method> = Static<(typeof methodResults)[M]>;

/** The parsed JSON of `line` if it has the shape of `schema`, else undefined. */
export function parseMessage<T extends TSchema>(schema: T, line: string): Static<T> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return Value.Check(schema, value) ? value : undefined;
}

export function parseReply(line: string): Reply | undefined {
  return parseMessage(Reply, line);
}

export function isResultOf<M extends Method>(method: M, value: unknown): value is MethodResult<M> {
  return Value.Check(methodResults[method], value);
}
