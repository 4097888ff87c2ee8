/**
 * Import into PostGIS: a vector layer of a data file (or any vector datasource a layer may have)
 * copied into a table of a PostgreSQL connection service by GDAL's VectorTranslate, with a
 * spatial index and a primary key, as a job (docs/datasources.md). The request is checked before
 * the job is made; a failed or cancelled import leaves the target as it was, or no table.
 */
import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';

import { ConfigError } from '../config.js';
import { BadRequest, Conflict, Forbidden, NotFound, Unprocessable } from '../errors.js';
import { postgresConnection, postgresDatasource } from '../gdal/catalog.js';
import { type CrsResolver } from '../gdal/crs.js';
import { runGdalTask } from '../gdal/gdal-child.js';
import { type ImportMode, type VectorImport } from '../gdal/vector-import.js';
import { type JobRecord } from '../jobs/record.js';
import { type JobContext, type JobService } from '../jobs/service.js';
import { normaliseAuthid } from '../qgis/crs.js';
import { PostgresDatabase } from '../storage/pg-database.js';
import { resolveService } from '../storage/pg-service.js';
import { type DataFiles } from './data-files.js';
import { isDriverPrefixed } from './data-roots.js';
import { DEFAULT_SCHEMA, isSystemSchema } from './projects.js';
import { type ProviderRegistry } from './providers/registry.js';

export interface ImportRequest {
  /** A connection service of the service files. */
  service: string;
  schema: string;
  table: string;
  /** A path in the upload root, or a vector datasource as a new layer takes it. */
  source: string;
  /** The source layer, when the source does not name one. */
  layer?: string;
  /** The CRS to reproject to, `EPSG:<code>`. */
  crs?: string;
  mode: ImportMode;
}

/**
 * Names GDAL writes as given (it lowercases others), so the table is where the request says:
 * lowercase letters, digits and `_`, at most PostgreSQL's 63 bytes.
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** An import is of no project: its job names none, and only administrators see it. */
const NO_PROJECT = { name: '', schema: DEFAULT_SCHEMA };

/** What the worker is given, but where to connect, which names the job's session. */
type ImportOptions = Omit<VectorImport, 'destination'>;

interface Target {
  service: string;
  schema: string;
  table: string;
}

function checkIdentifier(kind: string, name: string): void {
  if (!IDENTIFIER.test(name)) {
    throw new BadRequest(
      `${kind} "${name.slice(0, 80)}" must be lowercase letters, digits and _, not starting with a digit, at most 63`,
    );
  }
}

function quoted(target: Target): string {
  const quote = (name: string): string => `"${name}"`;
  return `${quote(target.schema)}.${quote(target.table)}`;
}

/** A source without a scheme, a leading slash or `=`: a path in the upload root. */
function isUploadPath(path: string): boolean {
  return !isAbsolute(path) && !path.includes('=') && !isDriverPrefixed(path);
}

async function tableOid(db: PostgresDatabase, target: Target): Promise<string | undefined> {
  const rows = await db.query<{ oid: string }>(
    `SELECT c.oid::text AS oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname = $2`,
    [target.schema, target.table],
  );
  return rows[0]?.oid;
}

export class PostgresImports {
  /** Targets being imported into by this process, as `service/schema.table`. */
  private readonly running = new Set<string>();

  constructor(
    private readonly providers: ProviderRegistry,
    private readonly dataFiles: DataFiles,
    private readonly crs: CrsResolver,
    private readonly jobs: JobService,
    private readonly serviceFiles: readonly string[],
  ) {}

  /** Checks the request and starts the import as a job. */
  async start(request: ImportRequest): Promise<JobRecord> {
    const target = this.checkTarget(request);
    const crs = this.targetCrs(request.crs);
    const { source, described } = await this.prepareSource(request);
    const db = await this.connect(request.service);
    try {
      await this.checkTable(db, target, request.mode);
    } finally {
      await db.close();
    }
    if (this.running.has(targetKey(target))) throw busy(target);
    const options: ImportOptions = { ...source, ...target, mode: request.mode, ...(crs && { crs }) };
    const params = { ...target, source: described, mode: request.mode, ...(request.layer && { layer: request.layer }) };
    return this.jobs.submit(
      { kind: 'import', project: NO_PROJECT, params: { ...params, ...(crs && { crs }) } },
      (context) => this.run(target, options, context),
    );
  }

  private checkTarget(request: ImportRequest): Target {
    checkIdentifier('schema', request.schema);
    checkIdentifier('table', request.table);
    if (isSystemSchema(request.schema)) throw new Forbidden(`schema "${request.schema}" is PostgreSQL's own`);
    return { service: request.service, schema: request.schema, table: request.table };
  }

  private targetCrs(crs: string | undefined): string | undefined {
    if (crs === undefined) return undefined;
    const authid = normaliseAuthid(crs);
    if (authid === undefined || !this.crs.fromAuthid(authid))
      throw new BadRequest(`crs ${crs} is not a known EPSG code`);
    return authid;
  }

  /** The source as GDAL opens it, checked as a new layer's datasource is (data roots, readable, a vector layer). */
  private async prepareSource(request: ImportRequest): Promise<{
    source: Pick<VectorImport, 'source' | 'layerName' | 'layerIndex' | 'drivers' | 'where'>;
    described: string;
  }> {
    const [path = '', ...options] = request.source.split('|');
    if (request.layer !== undefined) {
      if (options.length > 0) throw new BadRequest('name the source layer once: in source (|layername=) or as layer');
      options.push(`layername=${request.layer}`);
    }
    const datasource = [isUploadPath(path) ? this.dataFiles.pathOf(path) : path, ...options].join('|');
    const maker = this.providers.maker(datasource, 'vector');
    await maker.prepare(datasource, 'vector');
    const gdalSource = maker.gdalSource(datasource, { type: 'vector', projectDir: undefined });
    if (gdalSource === undefined)
      throw new Unprocessable(`GDAL cannot read ${maker.describe(datasource)}`, { code: 'datasource_unreadable' });
    const { gdalPath, layerName, layerIndex, drivers, filter } = gdalSource;
    return {
      source: {
        source: gdalPath,
        ...(layerName !== undefined && { layerName }),
        ...(layerIndex !== undefined && { layerIndex }),
        ...(drivers && { drivers }),
        ...(filter !== undefined && { where: filter }),
      },
      described: maker.describe(datasource),
    };
  }

  private async connect(service: string): Promise<PostgresDatabase> {
    try {
      resolveService(service, this.serviceFiles);
    } catch (error) {
      throw new NotFound((error as Error).message);
    }
    try {
      return await PostgresDatabase.connect(service, this.serviceFiles);
    } catch (error) {
      if (error instanceof ConfigError) throw new Unprocessable(error.message);
      throw error;
    }
  }

  private async checkTable(db: PostgresDatabase, target: Target, mode: ImportMode): Promise<void> {
    const schemas = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [target.schema]);
    if (schemas.length === 0)
      throw new NotFound(`schema "${target.schema}" does not exist in service "${target.service}"`);
    const exists = (await tableOid(db, target)) !== undefined;
    if (exists && mode === 'create') {
      throw new Conflict(`table ${target.schema}.${target.table} exists: import with overwrite or append`, {
        code: 'output_exists',
      });
    }
    if (!exists && mode === 'append') throw new NotFound(`table ${target.schema}.${target.table} does not exist`);
  }

  /** The job's work: GDAL's copy in a worker process; on failure or cancel, whatever it left is undone. */
  private async run(target: Target, options: ImportOptions, context: JobContext): Promise<Record<string, unknown>> {
    const key = targetKey(target);
    if (this.running.has(key)) throw busy(target);
    this.running.add(key);
    const session = `steward-import-${randomUUID()}`;
    const db = await this.connect(target.service);
    try {
      const before = await tableOid(db, target);
      const destination = postgresConnection(target.service, { application_name: session });
      try {
        await runGdalTask({ kind: 'import', options: { ...options, destination } }, context);
      } catch (error) {
        await undo(db, target, before, session);
        throw error;
      }
      return await imported(db, target);
    } finally {
      this.running.delete(key);
      await db.close();
    }
  }
}

function targetKey(target: Target): string {
  return `${target.service}/${target.schema}.${target.table}`;
}

function busy(target: Target): Conflict {
  return new Conflict(`an import into ${target.schema}.${target.table} is running`);
}

/**
 * Ends the worker's session, whose transaction the server then rolls back, and drops a table the
 * import made outside it (one whose oid is not the one the target had before).
 */
async function undo(db: PostgresDatabase, target: Target, before: string | undefined, session: string): Promise<void> {
  await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [session]);
  const after = await tableOid(db, target);
  if (after !== undefined && after !== before) await db.query(`DROP TABLE IF EXISTS ${quoted(target)}`);
}

/** What the job's result tells: the table's rows and the datasource that adds it as a layer. */
async function imported(db: PostgresDatabase, target: Target): Promise<Record<string, unknown>> {
  const [count] = await db.query<{ rows: string }>(`SELECT count(*)::text AS rows FROM ${quoted(target)}`);
  const [geometry] = await db.query<{ column: string }>(
    'SELECT f_geometry_column AS column FROM geometry_columns WHERE f_table_schema = $1 AND f_table_name = $2 LIMIT 1',
    [target.schema, target.table],
  );
  return {
    ...target,
    rows: Number(count?.rows ?? 0),
    ...(geometry && { datasource: postgresDatasource(target.service, target.schema, target.table, geometry.column) }),
  };
}
