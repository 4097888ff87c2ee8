/**
 * Datasource strings as the API takes them and QGIS writes them, split into what GDAL needs to open them.
 */
import { type LayerType } from '../qgis/layer.js';

export type DatasourceKind = 'file' | 'object-storage' | 'postgres';

export interface ParsedDatasource {
  kind: DatasourceKind;
  /** What `gdal.open` takes: a path, a `/vsis3/` path or a `PG:` connection string. */
  gdalPath: string;
  /** The vector layer inside the dataset (`|layername=`, `|layerid=`, or the PostGIS table). */
  layerName?: string;
  layerIndex?: number;
  /** PostGIS only. */
  postgres?: PostgresSource;
}

export interface PostgresSource {
  /** Connection entries other than the table, as `key=value` (service, dbname, host, ...). */
  connection: Array<[string, string]>;
  schema: string;
  table: string;
  geometryColumn: string;
}

const POSTGRES_TABLE = /table="((?:[^"]|"")+)"\."((?:[^"]|"")+)"(?:\s*\(([^)]+)\))?/;
const POSTGRES_ENTRY = /(\w+)=('(?:[^'\\]|\\.)*'|\S+)/g;

function unquote(value: string): string {
  return value.startsWith("'") ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}

function parsePostgres(datasource: string): ParsedDatasource {
  const table = POSTGRES_TABLE.exec(datasource);
  if (!table)
    throw new DatasourceSyntaxError('a database datasource needs table="<schema>"."<table>" (<geometry column>)');
  const rest = datasource.replace(table[0], ' ');
  const connection: Array<[string, string]> = [];
  for (const match of rest.matchAll(POSTGRES_ENTRY)) connection.push([match[1] as string, unquote(match[2] as string)]);
  const schema = (table[1] as string).replace(/""/g, '"');
  const name = (table[2] as string).replace(/""/g, '"');
  const geometryColumn = table[3]?.trim() ?? '';
  const connectionString = connection
    .filter(([key]) => ['service', 'dbname', 'host', 'port', 'user', 'password', 'sslmode'].includes(key))
    .map(([key, value]) => `${key}='${value.replace(/'/g, "\\'")}'`)
    .join(' ');
  return {
    kind: 'postgres',
    gdalPath: `PG:${connectionString}`,
    // GDAL names the layer of one geometry column of a table `schema.table(column)`.
    layerName: geometryColumn ? `${schema}.${name}(${geometryColumn})` : `${schema}.${name}`,
    postgres: { connection, schema, table: name, geometryColumn },
  };
}

export class DatasourceSyntaxError extends Error {}

function isPostgresDatasource(datasource: string): boolean {
  return /(^|\s)(service|dbname|host)=/.test(datasource) && /\btable=/.test(datasource);
}

const VECTOR_OPTION = /^(layername=.+|layerid=\d+)$/;

/**
 * Checks the `|key=value` options of a new layer's file datasource. QGIS Server refuses every
 * request to a project with one invalid layer, so only options the probe checks are taken: none on
 * a raster layer, one `layername=` or `layerid=` on a vector layer.
 */
export function checkNewLayerOptions(datasource: string, type: LayerType): void {
  if (isPostgresDatasource(datasource)) return;
  const options = datasource.split('|').slice(1);
  if (type === 'raster' && options.length > 0) {
    throw new DatasourceSyntaxError('a raster datasource takes no "|" options: give the file as /<path>/<file>');
  }
  if (options.length > 1 || options.some((option) => !VECTOR_OPTION.test(option))) {
    throw new DatasourceSyntaxError(
      'a vector datasource takes at most one option, |layername=<name> or |layerid=<number>',
    );
  }
}

export function parseDatasource(datasource: string): ParsedDatasource {
  if (isPostgresDatasource(datasource)) return parsePostgres(datasource);
  const [path = '', ...options] = datasource.split('|');
  const parsed: ParsedDatasource = {
    kind: path.startsWith('/vsis3/') ? 'object-storage' : 'file',
    gdalPath: path,
  };
  for (const option of options) {
    const [key, value = ''] = option.split('=', 2);
    if (key === 'layername') parsed.layerName = value;
    else if (key === 'layerid') parsed.layerIndex = Number(value);
  }
  return parsed;
}
