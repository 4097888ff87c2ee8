import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ConfigError, serviceFiles } from '../src/config.js';
import { freePort } from '../src/runtime/ports.js';
import { InternalDatabase } from '../src/storage/internal-db.js';
import { DatabaseUnavailable } from '../src/storage/pg-database.js';
import { parseServiceFile, resolveService } from '../src/storage/pg-service.js';
import { PostgresStore } from '../src/storage/postgres-store.js';
import { storedText } from '../src/storage/project-store.js';
import { after, afterEach, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

describe('the PostgreSQL connection service file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-service-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is looked for where libpq looks: PGSERVICEFILE or ~/.pg_service.conf, then PGSYSCONFDIR or the Debian default', () => {
    assert.deepEqual(serviceFiles({ PGSERVICEFILE: '/a/services', PGSYSCONFDIR: '/etc/pg' }), [
      '/a/services',
      '/etc/pg/pg_service.conf',
    ]);
    assert.deepEqual(serviceFiles({ HOME: '/home/ada' }), [
      '/home/ada/.pg_service.conf',
      '/etc/postgresql-common/pg_service.conf',
    ]);
  });

  it('is parsed into sections of key=value, without comments or blank lines', () => {
    const sections = parseServiceFile(
      '# comment\n[one]\nhost = db.example\n\nport=6543\n[two]\ndbname=gis\r\npassword=a=b # not a comment\n',
    );
    assert.deepEqual([...sections.keys()], ['one', 'two']);
    assert.deepEqual(Object.fromEntries(sections.get('one') ?? []), { host: 'db.example', port: '6543' });
    assert.deepEqual(Object.fromEntries(sections.get('two') ?? []), { dbname: 'gis', password: 'a=b # not a comment' });
  });

  it("resolves a service from the user's file first, then the system's", () => {
    const user = join(dir, 'user.conf');
    writeFileSync(user, '[mine]\nhost=127.0.0.1\nport=5433\ndbname=maps\nuser=ada\npassword=secret\n');
    writeFileSync(
      join(dir, 'pg_service.conf'),
      '[mine]\nhost=ignored\n[shared]\nhost=/run/postgresql\nsslmode=require\n',
    );
    const env = { PGSERVICEFILE: user, PGSYSCONFDIR: dir };
    assert.deepEqual(resolveService('mine', serviceFiles(env)), {
      host: '127.0.0.1',
      port: 5433,
      database: 'maps',
      user: 'ada',
      password: 'secret',
    });
    assert.deepEqual(resolveService('shared', serviceFiles(env)), {
      host: '/run/postgresql',
      ssl: { rejectUnauthorized: false },
    });
    assert.throws(
      () => resolveService('nope', serviceFiles(env)),
      (error: Error) => error instanceof ConfigError && /"nope" is not defined/.test(error.message),
    );
    writeFileSync(user, '[mine]\nport=none\n');
    assert.throws(() => resolveService('mine', serviceFiles(env)), ConfigError);
  });
});

describe('PostgresStore on a real database', () => {
  let db: TestDatabase;
  let projectsDir: string;
  const stores: PostgresStore[] = [];
  const open = async (): Promise<PostgresStore> => {
    const store = await PostgresStore.open(db.service, projectsDir, serviceFiles(process.env));
    stores.push(store);
    return store;
  };

  before(async () => {
    db = await startTestDatabase();
    projectsDir = mkdtempSync(join(tmpdir(), 'steward-projects-'));
  });
  // Each test's sessions end with it: the 503 test ends every session of the role, and a session
  // of an earlier test ended then would report its loss after that test.
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  after(async () => {
    await db?.stop();
    rmSync(projectsDir, { recursive: true, force: true });
  });

  it('gives a cheap identity that changes when anyone saves the project', async () => {
    const store = await open();
    const ref = { schema: 'ident', name: 'p' };
    await store.create(ref, '<qgis version="3.22.16"/>');
    const first = await store.identity(ref);
    assert.equal(await store.identity(ref), first, 'stable while the row is unchanged');
    const written = await store.write(ref, Buffer.from('<qgis version="3.22.16"><title>two</title></qgis>'));
    assert.notEqual(written, first);
    assert.equal(await store.identity(ref), written, 'write returns the identity that identity() reports');
    // Another writer (QGIS Desktop) replaces the row: the identity moves on and the new text is read.
    const other = await open();
    await other.write(ref, Buffer.from('<qgis version="3.22.16"><title>three</title></qgis>'));
    assert.notEqual(await store.identity(ref), written);
    const stored = await store.read(ref);
    assert.match(stored ? storedText(stored) : '', /three/);
    assert.equal(await store.identity({ schema: 'ident', name: 'none' }), undefined);
    assert.equal(await store.read({ schema: 'no_such_schema', name: 'p' }), undefined);
  });

  it('makes writers to one project take turns across sessions, and lets other projects through', async () => {
    const [one, two] = [await open(), await open()];
    const ref = { schema: 'locks', name: 'p' };
    const events: string[] = [];
    const hold = (store: PostgresStore, name: string, target = ref) =>
      store.withLock(target, async () => {
        events.push(`${name} in`);
        await sleep(300);
        events.push(`${name} out`);
      });
    const first = hold(one, 'a');
    await sleep(50);
    const second = hold(two, 'b');
    await sleep(50);
    await hold(two, 'c', { schema: 'locks', name: 'other' });
    await Promise.all([first, second]);
    const at = (event: string): number => events.indexOf(event);
    assert.ok(at('b in') > at('a out'), `the second session waits for the first: ${events.join(', ')}`);
    assert.ok(at('c in') < at('a out'), `another project is not held up: ${events.join(', ')}`);
  });

  it('creates the schema and QGIS table on first use, and lists an unknown schema as empty', async () => {
    const store = await open();
    assert.deepEqual(await store.list('fresh'), []);
    await store.create({ schema: 'fresh', name: 'x' }, '<qgis/>');
    assert.deepEqual(await store.list('fresh'), ['x']);
    const columns = await db.sql<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'fresh' AND table_name = 'qgis_projects' ORDER BY ordinal_position`,
    );
    assert.deepEqual(
      columns.map((column) => [column.column_name, column.data_type]),
      [
        ['name', 'text'],
        ['metadata', 'jsonb'],
        ['content', 'bytea'],
      ],
    );
    assert.equal(
      await store.mapParameter({ schema: 'fresh', name: 'x' }),
      `postgresql:?service=${db.service}&schema=fresh&project=x`,
    );
    assert.equal(store.dataDir({ schema: 'fresh', name: 'x' }), join(projectsDir, 'steward', 'fresh_x'));
  });

  it("clears temporary files a killed process left in the data folders of every schema's projects", async () => {
    const store = await open();
    const refs = [
      { schema: 'tidy', name: 'one' },
      { schema: 'also_tidy', name: 'two' },
    ];
    for (const ref of refs) {
      await store.create(ref, '<qgis/>');
      mkdirSync(store.dataDir(ref), { recursive: true });
      writeFileSync(join(store.dataDir(ref), 'red.qml'), '<qgis/>');
      writeFileSync(join(store.dataDir(ref), `.red.qml.${randomUUID()}.tmp`), '<qgis');
    }
    assert.equal((await store.clearLeftovers()).cleared, 2);
    for (const ref of refs) assert.deepEqual(readdirSync(store.dataDir(ref)), ['red.qml']);
  });

  it("takes into the database the styles an earlier version kept in a project's data folder", async () => {
    const store = await open();
    await store.adoptFolderStyles(); // those of the tests before
    const ref = { schema: 'earlier', name: 'kept' };
    await store.create(ref, '<qgis/>');
    const dir = store.dataDir(ref);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';
    const image = join(dir, 'images', 'marked', 'a1b2.svg');
    mkdirSync(join(dir, 'images', 'marked'), { recursive: true });
    writeFileSync(image, svg);
    const markerQml = `<qgis><renderer-v2 type="singleSymbol"><symbols><symbol type="marker" name="0"><layer class="SvgMarker"><Option type="Map"><Option type="QString" name="name" value="${image}"/></Option></layer></symbol></symbols></renderer-v2></qgis>`;
    const plainQml = '<qgis><renderer-v2 type="singleSymbol"/></qgis>';
    writeFileSync(join(dir, 'marked.qml'), markerQml);
    writeFileSync(join(dir, 'plain.qml'), plainQml);
    writeFileSync(join(dir, 'taken.qml'), "<qgis>the folder's</qgis>");
    InternalDatabase.use(dir, (internal) => internal.setDefaultStyle('point', 'marked'));
    // Another replica took its own "taken" into the database first.
    await store.styles.apply(ref, [{ name: 'taken', qml: "<qgis>the database's</qgis>" }]);

    const report = await store.adoptFolderStyles();
    assert.equal(report.cleared, 2);
    assert.deepEqual(
      report.failures.map((failure) => [failure.project, failure.reason.replace(dir, 'DIR')]),
      [[ref, 'its styles "taken" in DIR differ from those of the same name in the database and were left there']],
    );
    assert.deepEqual(await store.styles.names(ref), ['marked', 'plain', 'taken']);
    const marked = await store.styles.read(ref, 'marked');
    assert.ok(marked?.includes(`value="base64:${Buffer.from(svg).toString('base64')}"`), marked);
    assert.equal(await store.styles.read(ref, 'plain'), plainQml, 'a style naming no image is taken as it is');
    assert.equal(await store.styles.read(ref, 'taken'), "<qgis>the database's</qgis>");
    assert.deepEqual(await store.styles.defaults(ref), { point: 'marked', line: 'default', polygon: 'default' });
    assert.deepEqual(readdirSync(dir).sort(), ['images', 'taken.qml'], 'the images stay: the layers name them');
    assert.equal((await store.adoptFolderStyles()).cleared, 0, 'taken once');
  });

  it('fails with 503, the reason in the message for the log, while the database refuses connections, and recovers', async () => {
    const store = await open();
    await db.sql(`ALTER ROLE ${db.user} NOLOGIN`);
    await db.sql('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [db.user]);
    try {
      // The first query may still meet a pooled session that the server has just ended.
      for (const reason of [/terminating connection|not permitted to log in/, /not permitted to log in/]) {
        await assert.rejects(store.list('fresh'), (error: Error) => {
          assert.ok(error instanceof DatabaseUnavailable);
          assert.equal(error.status, 503);
          assert.match(error.message, /^PostgreSQL service "steward_test" \(.*\) is not available: /);
          assert.match(error.message, reason);
          return true;
        });
      }
    } finally {
      await db.sql(`ALTER ROLE ${db.user} LOGIN`);
    }
    assert.deepEqual(await store.list('fresh'), ['x']);
  });
});

describe('starting with an unusable PostgreSQL service', () => {
  let db: TestDatabase;
  let silent: Server;
  const sockets: Socket[] = [];
  before(async () => {
    db = await startTestDatabase();
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    await db?.stop();
  });

  it('stops the server at start with one line naming an unknown service', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', MAIN], {
      env: {
        ...process.env,
        STEWARD_QGISSERVER_URL: 'http://127.0.0.1:1/ows/',
        STEWARD_QGISSERVER_PROJECTS_DIR: tmpdir(),
        STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: 'no_such_service',
        STEWARD_LISTEN: '127.0.0.1:0',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 2, result.stderr);
    assert.match(
      result.stderr,
      /^steward: PostgreSQL service "no_such_service" is not defined in .*pg_service\.conf\n$/,
    );
  });

  it('fails within seconds when the database refuses or never answers', async () => {
    db.addService('closed', { host: '127.0.0.1', port: await freePort(), dbname: 'x', user: 'x' });
    db.addService('silent', {
      host: '127.0.0.1',
      port: (silent.address() as { port: number }).port,
      dbname: 'x',
      user: 'x',
    });
    for (const service of ['closed', 'silent']) {
      const started = Date.now();
      await assert.rejects(PostgresStore.open(service, tmpdir(), serviceFiles(process.env)), (error: Error) => {
        assert.ok(error instanceof ConfigError, error.message);
        assert.match(
          error.message,
          new RegExp(`cannot connect to PostgreSQL service "${service}" \\(x@127\\.0\\.0\\.1:\\d+/x\\)`),
        );
        return true;
      });
      assert.ok(Date.now() - started < 10_000, `${service} took ${Date.now() - started} ms`);
    }
  });
});
