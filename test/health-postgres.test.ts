/**
 * /health/ready with projects in PostgreSQL: the storage check names the database while Steward's
 * role cannot connect to it, and is ready again once it can.
 */
import assert from 'node:assert/strict';

import { polygonsLayer } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Stack, startStack } from './support/stack.js';

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
  error?: string;
}

describe('health checks with projects in PostgreSQL', () => {
  let db: TestDatabase;
  let data: Fixtures;
  let stack: Stack;

  const ready = async () => {
    const { status, body } = await stack.call('GET', '/health/ready');
    return { status, body: body as Readiness };
  };
  /** Whether Steward's role may open connections; taking it away also ends the ones it has. */
  const login = async (allowed: boolean) => {
    await db.sql(`ALTER ROLE ${db.quote(db.user)} ${allowed ? 'LOGIN' : 'NOLOGIN'}`);
    if (!allowed) await db.sql('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [db.user]);
  };

  before(async () => {
    db = await startTestDatabase();
    data = makeFixtures();
    stack = await startStack({ psqlService: db.service });
    assert.equal((await stack.call('POST', '/api/projects', { name: 'alpha', author: 'health' })).status, 201);
    assert.equal((await stack.call('POST', '/api/projects/alpha/layers', polygonsLayer(data))).status, 201);
  });
  after(async () => {
    await login(true).catch(() => {});
    await stack?.stop();
    await db?.stop();
  });

  it('is ready with the database reachable, names it while it is not, and is ready again once it is', async () => {
    const up = await ready();
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual(up.body.checks['storage'], { ok: true, detail: 'database reachable' });
    assert.match(up.body.checks['qgis_server']?.detail ?? '', /GetCapabilities of project alpha answered/);
    await login(false);
    try {
      const down = await ready();
      assert.equal(down.status, 503, JSON.stringify(down.body));
      assert.equal(down.body.checks['storage']?.ok, false);
      // The pool's idle connection was just ended, or a new one is refused: either way the database is named.
      assert.match(
        down.body.checks['storage']?.detail ?? '',
        /^postgresql storage: PostgreSQL service "[^"]+" \(.+\) is not available: (.*not permitted to log in|terminating connection)/,
      );
      assert.match(down.body.error ?? '', /postgresql storage/);
    } finally {
      await login(true);
    }
    const again = await ready();
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });
});
