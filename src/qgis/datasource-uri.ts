/**
 * The `key=value` datasource grammar QGIS reads for database providers (postgres, spatialite):
 * values bare or quoted with `'` or `"` (backslash escapes the quote and itself), `table=` followed by
 * `"schema"."table"` and an optional `(geometry column)`, and `sql=` taking the rest of the string.
 * Parsed into known keys only: an unknown key or a key given twice is refused, so what is written
 * back is what QGIS reads.
 */

export class DatasourceUriError extends Error {}

/** A key QGIS does not read for this provider, or one given twice: the source is not what it says. */
export class DatasourceUriKeyError extends DatasourceUriError {}

/** Keys of the connection, written first, in the order QGIS writes them. */
const CONNECTION_KEYS = ['dbname', 'service', 'host', 'port', 'user', 'password', 'sslmode', 'authcfg'] as const;
/** Keys of the layer, written after the connection, before `table=`. */
const LAYER_KEYS = ['key', 'estimatedmetadata', 'srid', 'type', 'selectatid', 'checkPrimaryKeyUnicity'] as const;

export type UriKey = (typeof CONNECTION_KEYS)[number] | (typeof LAYER_KEYS)[number];

export interface DatasourceUri {
  entries: Partial<Record<UriKey, string>>;
  schema?: string;
  table?: string;
  geometryColumn?: string;
  sql?: string;
}

/** The keys each provider reads; QGIS keeps others as opaque parameters its provider ignores. */
export const PROVIDER_KEYS: Record<'postgres' | 'spatialite', ReadonlySet<UriKey>> = {
  postgres: new Set([...CONNECTION_KEYS, ...LAYER_KEYS]),
  spatialite: new Set(['dbname', 'key']),
};

const SSL_MODES = new Set(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']);

function isSpace(char: string | undefined): boolean {
  return char !== undefined && /\s/.test(char);
}

class Reader {
  index = 0;
  constructor(readonly text: string) {}

  get char(): string | undefined {
    return this.text[this.index];
  }

  get done(): boolean {
    return this.index >= this.text.length;
  }

  skipBlanks(): void {
    while (isSpace(this.char)) this.index++;
  }

  name(): string {
    const start = this.index;
    while (!this.done && this.char !== '=' && !isSpace(this.char)) this.index++;
    return this.text.slice(start, this.index);
  }

  /** A bare or quoted value, and the blanks after it. */
  value(): string {
    this.skipBlanks();
    const value = this.char === "'" || this.char === '"' ? this.quoted(this.char) : this.bare();
    this.skipBlanks();
    return value;
  }

  private quoted(delimiter: string): string {
    let value = '';
    this.index++;
    for (;;) {
      if (this.done) throw new DatasourceUriError(`a value quoted with ${delimiter} is not closed`);
      let char = this.char as string;
      if (char === '\\') {
        const next = this.text[this.index + 1];
        if (next === delimiter || next === '\\') {
          this.index++;
          char = next;
        }
      } else if (char === delimiter) {
        this.index++;
        return value;
      }
      value += char;
      this.index++;
    }
  }

  private bare(): string {
    let value = '';
    while (!this.done && !isSpace(this.char)) {
      let char = this.char as string;
      const next = this.text[this.index + 1];
      if (char === '\\' && (next === '\\' || next === "'")) {
        this.index++;
        char = next;
      }
      value += char;
      this.index++;
    }
    return value;
  }

  /** `(column)` after a table, with `\)` and `\\` escaped. */
  geometryColumn(): string {
    this.index++;
    let column = '';
    while (!this.done && this.char !== ')') {
      const next = this.text[this.index + 1];
      if (this.char === '\\' && (next === ')' || next === '\\')) this.index++;
      column += this.char as string;
      this.index++;
    }
    if (this.done) throw new DatasourceUriError('the geometry column after table= is missing its ")"');
    this.index++;
    this.skipBlanks();
    return column;
  }
}

function readTable(reader: Reader, uri: DatasourceUri): void {
  const first = reader.value();
  if (reader.char === '.') {
    reader.index++;
    uri.schema = first;
    uri.table = reader.value();
  } else {
    uri.table = first;
  }
  if (reader.char === '(') uri.geometryColumn = reader.geometryColumn();
}

function checkValue(key: UriKey, value: string): void {
  if (key === 'sslmode' && !SSL_MODES.has(value)) {
    throw new DatasourceUriKeyError(`sslmode='${value}' is not one of ${[...SSL_MODES].join(', ')}`);
  }
  if ((key === 'port' || key === 'srid') && !/^\d+$/.test(value)) {
    throw new DatasourceUriKeyError(`${key} must be a number, not '${value}'`);
  }
}

/** Parses a datasource of `provider` as QGIS does, keeping only the keys that provider reads. */
export function parseDatasourceUri(text: string, provider: keyof typeof PROVIDER_KEYS): DatasourceUri {
  const known = PROVIDER_KEYS[provider];
  const uri: DatasourceUri = { entries: {} };
  const reader = new Reader(text);
  for (reader.skipBlanks(); !reader.done; reader.skipBlanks()) {
    const name = reader.name();
    reader.skipBlanks();
    if (name === '' || reader.char !== '=') {
      throw new DatasourceUriError(`"${name || reader.char}" is not a key=value pair`);
    }
    reader.index++;
    if (name === 'sql') {
      reader.skipBlanks();
      uri.sql = text.slice(reader.index);
      break;
    }
    if (name === 'table') {
      if (uri.table !== undefined) throw new DatasourceUriKeyError('table= is given twice');
      readTable(reader, uri);
      continue;
    }
    const key = name === 'username' ? 'user' : name;
    if (!known.has(key as UriKey)) {
      throw new DatasourceUriKeyError(`${name}= is not a key the ${provider} provider of QGIS reads`);
    }
    if (uri.entries[key as UriKey] !== undefined) throw new DatasourceUriKeyError(`${name}= is given twice`);
    const value = reader.value();
    checkValue(key as UriKey, value);
    uri.entries[key as UriKey] = value;
  }
  if (!uri.table) throw new DatasourceUriError('a database datasource needs table="<schema>"."<table>" (<geometry>)');
  return uri;
}

function quote(value: string, delimiter = "'"): string {
  return delimiter + value.replace(/\\/g, '\\\\').replaceAll(delimiter, `\\${delimiter}`) + delimiter;
}

/** Keys QGIS writes without quotes (numbers, names of its own). */
const BARE_KEYS: ReadonlySet<UriKey> = new Set([
  'host',
  'port',
  'sslmode',
  'authcfg',
  'estimatedmetadata',
  'srid',
  'type',
  'selectatid',
]);

/** The datasource as QGIS writes it (`QgsDataSourceUri::uri`): connection, layer keys, table, sql. */
export function formatDatasourceUri(uri: DatasourceUri): string {
  const parts: string[] = [];
  for (const key of [...CONNECTION_KEYS, ...LAYER_KEYS]) {
    const value = uri.entries[key];
    if (value === undefined) continue;
    const bare = BARE_KEYS.has(key) && /^[^\s'"\\]+$/.test(value);
    parts.push(`${key}=${bare ? value : quote(value)}`);
  }
  if (uri.table !== undefined) {
    const table =
      uri.schema === undefined ? quote(uri.table, '"') : `${quote(uri.schema, '"')}.${quote(uri.table, '"')}`;
    const column = uri.geometryColumn ? ` (${uri.geometryColumn.replace(/\\/g, '\\\\').replace(/\)/g, '\\)')})` : '';
    parts.push(`table=${table}${column}`);
  }
  if (uri.sql !== undefined && uri.sql !== '') parts.push(`sql=${uri.sql}`);
  return parts.join(' ');
}

export const MASKED_PASSWORD = "password='***'";

/**
 * Text with every password of a connection string masked: `password=` of the key=value grammar
 * (QGIS, libpq, GDAL's `PG:`) and the user information of URLs (`scheme://user:secret@host`).
 */
export function maskPasswords(text: string): string {
  return text
    .replace(/\bpassword\s*=\s*(?:'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&|]*)/gi, MASKED_PASSWORD)
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^@\s/]*@/gi, '$1***@');
}

/** A C0 control character or DEL: QGIS Server fails to load a project with one in a datasource. */
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
