/**
 * The `postgres` and `spatialite` providers: tables named in QGIS's key=value grammar
 * (`src/qgis/datasource-uri.ts`), read through GDAL to check them as QGIS opens them (the table,
 * its key column, its `sql=` filter).
 */
import { isAbsolute, resolve } from 'node:path';

import { BadRequest, Unprocessable } from '../../errors.js';
import { type GdalSource } from '../../gdal/datasource.js';
import { checkTableQuery, ProbeError } from '../../gdal/probe.js';
import {
  type DatasourceUri,
  DatasourceUriKeyError,
  formatDatasourceUri,
  maskPasswords,
  parseDatasourceUri,
} from '../../qgis/datasource-uri.js';
import { type LayerType } from '../../qgis/layer.js';
import { type DataRoots } from '../data-roots.js';
import { type LayerInspector } from '../layer-inspector.js';
import {
  errorMessage,
  type LayerMaker,
  type PreparedSource,
  type SourceContext,
  type SourceState,
} from './provider.js';

/** Connection keys libpq reads, passed to GDAL's `PG:`. */
const LIBPQ_KEYS = ['dbname', 'service', 'host', 'port', 'user', 'password', 'sslmode'] as const;

function quoteIdentifier(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

function qualifiedTable(uri: DatasourceUri): string {
  const table = quoteIdentifier(uri.table ?? '');
  return uri.schema === undefined ? table : `${quoteIdentifier(uri.schema)}.${table}`;
}

abstract class DatabaseProvider implements LayerMaker {
  abstract readonly key: 'postgres' | 'spatialite';

  constructor(protected readonly inspector: LayerInspector) {}

  abstract claims(datasource: string, type: LayerType): boolean;
  abstract gdalSource(datasource: string, context: SourceContext): GdalSource;
  abstract confine(datasource: string, context: SourceContext): Promise<void>;

  /** The datasource parsed: BadRequest when QGIS cannot parse it, Unprocessable for a key it does not read. */
  parse(datasource: string): DatasourceUri {
    try {
      return parseDatasourceUri(datasource, this.key);
    } catch (error) {
      const message = `${this.key} datasource: ${maskPasswords(errorMessage(error))}`;
      throw error instanceof DatasourceUriKeyError ? new Unprocessable(message) : new BadRequest(message);
    }
  }

  describe(datasource: string): string {
    return maskPasswords(datasource);
  }

  async inspect(datasource: string, context: SourceContext): Promise<SourceState> {
    try {
      const uri = this.parse(datasource);
      await this.confine(datasource, context);
      const source = this.gdalSource(datasource, context);
      const inspection = await this.inspector.inspect(source, context.type, context.fresh);
      // The key column and filter are queried in a project check, not on each read of the layer.
      if (!inspection.valid || !context.fresh) return masked(inspection);
      await this.checkQuery(source, uri, uri.entries.key);
      return inspection;
    } catch (error) {
      return { valid: false, reason: maskPasswords(errorMessage(error)) };
    }
  }

  /** The key column and the `sql=` filter, as the database reads them. */
  protected async checkQuery(source: GdalSource, uri: DatasourceUri, key: string | undefined): Promise<void> {
    const columns = key === undefined ? [] : key.split(',').map((column) => quoteIdentifier(column.trim()));
    await checkTableQuery(source, qualifiedTable(uri), columns, uri.sql);
  }

  async prepare(datasource: string, type: LayerType): Promise<PreparedSource> {
    if (type !== 'vector') throw new BadRequest(`${this.key} datasources are vector layers`);
    const uri = this.parse(datasource);
    if (uri.sql !== undefined && uri.sql.includes(';'))
      throw new BadRequest('sql= is one filter expression, without ";"');
    await this.confine(datasource, { type, projectDir: undefined });
    const source = this.gdalSource(datasource, { type, projectDir: undefined });
    try {
      const probed = await this.inspector.probe(source, type);
      if (probed.type !== 'vector') throw new ProbeError(`${this.key} datasources are vector layers`);
      const key = uri.entries.key ?? probed.keyColumn;
      await this.checkQuery(source, uri, key);
      return {
        provider: this.key,
        probed,
        datasource: (crs) => formatDatasourceUri(this.stored(uri, key, crs.srid, probed.wkbType)),
      };
    } catch (error) {
      if (error instanceof ProbeError)
        throw new Unprocessable(maskPasswords(error.message), { code: 'datasource_unreadable' });
      throw error;
    }
  }

  /** The datasource to store: what QGIS needs to open the table without asking the database first. */
  protected stored(uri: DatasourceUri, key: string, _srid: number | undefined, _wkbType: string): DatasourceUri {
    return { ...uri, entries: { ...uri.entries, key } };
  }
}

function masked(state: SourceState): SourceState {
  return state.reason === undefined ? state : { ...state, reason: maskPasswords(state.reason) };
}

export class PostgresProvider extends DatabaseProvider {
  readonly key = 'postgres';

  claims(datasource: string): boolean {
    return (
      /(^|\s)(service|host|dbname)\s*=/.test(datasource) &&
      /(^|\s)table\s*=/.test(datasource) &&
      !isSpatialite(datasource)
    );
  }

  gdalSource(datasource: string): GdalSource {
    const uri = this.parse(datasource);
    const connection = LIBPQ_KEYS.flatMap((key) => {
      const value = uri.entries[key];
      return value === undefined ? [] : [`${key}='${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`];
    });
    const table = uri.schema === undefined ? uri.table : `${uri.schema}.${uri.table}`;
    return {
      kind: 'database',
      gdalPath: `PG:${connection.join(' ')}`,
      // GDAL names the layer of one geometry column of a table `schema.table(column)`.
      layerName: uri.geometryColumn ? `${table}(${uri.geometryColumn})` : table,
      drivers: ['PostgreSQL'],
      table: { ...(uri.schema !== undefined && { schema: uri.schema }), name: uri.table ?? '' },
      ...(uri.sql !== undefined && uri.sql.trim() !== '' && { filter: uri.sql }),
    };
  }

  async confine(): Promise<void> {
    // A database is not the server's files.
  }

  protected override stored(uri: DatasourceUri, key: string, srid: number | undefined, wkbType: string): DatasourceUri {
    return {
      ...uri,
      entries: {
        ...uri.entries,
        key,
        ...(srid !== undefined && { srid: String(srid) }),
        type: wkbType,
        checkPrimaryKeyUnicity: '1',
      },
    };
  }
}

/** A SpatiaLite datasource names its database by its file (`dbname='/data/places.sqlite'`), never a service or host. */
function isSpatialite(datasource: string): boolean {
  return !/(^|\s)(service|host)\s*=/.test(datasource) && /(^|\s)dbname\s*=\s*['"]?(\/|\.\.?\/)/.test(datasource);
}

export class SpatialiteProvider extends DatabaseProvider {
  readonly key = 'spatialite';

  constructor(
    inspector: LayerInspector,
    private readonly dataRoots: DataRoots,
  ) {
    super(inspector);
  }

  claims(datasource: string): boolean {
    return isSpatialite(datasource) && /(^|\s)table\s*=/.test(datasource);
  }

  gdalSource(datasource: string, context: SourceContext): GdalSource {
    const uri = this.parse(datasource);
    const file = uri.entries.dbname ?? '';
    const path = /^\.\.?\//.test(file) && context.projectDir !== undefined ? resolve(context.projectDir, file) : file;
    const table = uri.table ?? '';
    return { kind: 'file', gdalPath: path, layerName: table, drivers: ['SQLite'], table: { name: table } };
  }

  async confine(datasource: string, context: SourceContext): Promise<void> {
    await this.dataRoots.checkDataset(this.gdalSource(datasource, context).gdalPath);
  }

  override async prepare(datasource: string, type: LayerType): Promise<PreparedSource> {
    if (!isAbsolute(this.parse(datasource).entries.dbname ?? '')) {
      throw new BadRequest(`the dbname of a spatialite datasource must be an absolute path`);
    }
    return super.prepare(datasource, type);
  }
}
