import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ClientConfig, escapeIdentifier, Pool, type QueryResultRow } from 'pg';

import { type OwnCluster, startOwnCluster } from './pg-cluster.js';

/**
 * A database of the tests' own with PostGIS, reached through a connection service named in a
 * service file that PGSERVICEFILE points at (for Steward, GDAL and QGIS Server alike).
 */
export interface TestDatabase {
  service: string;
  serviceFile: string;
  database: string;
  user: string;
  /** Runs SQL on the test database as its administrator. */
  sql<Row extends QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]>;
  /** An identifier quoted for SQL. */
  quote(identifier: string): string;
  /** Adds a service section to the service file. */
  addService(name: string, entries: Record<string, string | number>): void;
  stop(): Promise<void>;
}

const SERVICE = 'steward_test';

/**
 * A pool of the tests' own connections. `DROP DATABASE ... WITH (FORCE)` ends the backends of
 * connections still closing after `pool.end()`, and the pool reports that as an 'error' event, which
 * would end the test process unheard of without a listener.
 */
function adminPool(config: ClientConfig): Pool {
  const pool = new Pool(config);
  pool.on('error', () => undefined);
  return pool;
}

/** The cluster on 127.0.0.1:5432 (PGUSER/PGPASSWORD or postgres), when it answers and STEWARD_TEST_OWN_CLUSTER is not set. */
async function reachableCluster(): Promise<ClientConfig | undefined> {
  if (process.env['STEWARD_TEST_OWN_CLUSTER']) return undefined;
  const admin: ClientConfig = {
    host: '127.0.0.1',
    port: 5432,
    user: process.env['PGUSER'] ?? 'postgres',
    password: process.env['PGPASSWORD'],
    database: 'postgres',
    connectionTimeoutMillis: 2000,
  };
  const pool = adminPool(admin);
  try {
    await pool.query('SELECT 1');
    return admin;
  } catch {
    return undefined;
  } finally {
    await pool.end();
  }
}

async function adminQuery(admin: ClientConfig, database: string, statements: string[]): Promise<void> {
  const pool = adminPool({ ...admin, database });
  try {
    for (const statement of statements) await pool.query(statement);
  } finally {
    await pool.end();
  }
}

function serviceSection(name: string, entries: Record<string, string | number>): string {
  return [`[${name}]`, ...Object.entries(entries).map(([key, value]) => `${key}=${value}`), ''].join('\n');
}

/** Creates a role and a PostGIS database `steward_test_<random>`, on a reachable cluster or an own one. */
export async function startTestDatabase(): Promise<TestDatabase> {
  let cluster: OwnCluster | undefined;
  const admin = (await reachableCluster()) ?? (cluster = await startOwnCluster()).admin;
  const name = `steward_test_${randomBytes(6).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await adminQuery(admin, 'postgres', [
    `CREATE ROLE ${name} LOGIN PASSWORD '${password}'`,
    `CREATE DATABASE ${name} OWNER ${name}`,
  ]);
  await adminQuery(admin, name, ['CREATE EXTENSION postgis']);
  const dir = mkdtempSync(join(tmpdir(), 'steward-pgservice-'));
  const serviceFile = join(dir, 'pg_service.conf');
  let sections = serviceSection(SERVICE, {
    host: admin.host ?? '127.0.0.1',
    port: admin.port ?? 5432,
    dbname: name,
    user: name,
    password,
  });
  writeFileSync(serviceFile, sections);
  process.env['PGSERVICEFILE'] = serviceFile;
  const pool = adminPool({ ...admin, database: name });
  return {
    service: SERVICE,
    serviceFile,
    database: name,
    user: name,
    async sql<Row extends QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
      return (await pool.query<Row>(text, values)).rows;
    },
    quote: escapeIdentifier,
    addService(service, entries) {
      sections += serviceSection(service, entries);
      writeFileSync(serviceFile, sections);
    },
    async stop() {
      await pool.end();
      await adminQuery(admin, 'postgres', [`DROP DATABASE ${name} WITH (FORCE)`, `DROP ROLE ${name}`]);
      cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A table `geodata.parcels` with one square parcel (1..3 E, 44..46 N) that the test user may read. */
export async function createParcels(db: TestDatabase): Promise<void> {
  await db.sql(`
    CREATE SCHEMA geodata;
    CREATE TABLE geodata.parcels (id serial PRIMARY KEY, geom geometry(MultiPolygon, 4326));
    INSERT INTO geodata.parcels (geom) VALUES (ST_GeomFromText('MULTIPOLYGON(((1 44,3 44,3 46,1 46,1 44)))', 4326));
    GRANT USAGE ON SCHEMA geodata TO ${db.user};
    GRANT SELECT ON geodata.parcels TO ${db.user};
  `);
}
