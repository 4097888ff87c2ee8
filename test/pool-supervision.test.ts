/**
 * The production pool heals: its processes and nginx are supervised (started again, each restart
 * logged and counted, their lines in the log with their names), and nginx never holds a process
 * out. Processes are killed under load: one of two, and no request through nginx fails; both, and
 * /ows/ serves again within 2 s of the pool accepting again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { fcgiServerAddresses, type QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { Supervisor } from '../src/runtime/supervisor.js';
import { FastcgiQgisClient } from '../src/transport/qgis-fastcgi.js';
import { after, before, describe, it } from './support/node-test.js';
import { directStatus, firstAnswer, mapStatus, underLoad } from './support/pool-load.js';
import { sampleGetMapUrl, writeSampleProject } from './support/sample-project.js';
import { startTestPool } from './support/stack.js';
import { until } from './support/wait.js';

const CLIENTS = 4;

interface Logged {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  message: string;
}

describe('the supervised production pool under kills', () => {
  const logged: Logged[] = [];
  const restarts: string[] = [];
  const supervisor = new Supervisor({
    log: {
      info: (fields, message) => logged.push({ level: 'info', fields, message }),
      warn: (fields, message) => logged.push({ level: 'warn', fields, message }),
    },
    onRestart: (child) => restarts.push(child),
  });
  let dir = '';
  let pool: QgisFcgiPool;
  let getMap = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-supervision-'));
    const project = await writeSampleProject(dir);
    pool = await startPoolWith(join(dir, 'run'), supervisor);
    getMap = sampleGetMapUrl(pool.url, project).href;
    assert.equal(await mapStatus(getMap), 200);
  });
  after(async () => {
    await pool?.stop();
    await supervisor.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives QGIS Server a runtime folder only its user may enter, and Qt does not complain', () => {
    assert.equal(statSync(join(dir, 'run', 'xdg-runtime')).mode & 0o777, 0o700);
    assert.deepEqual(
      pool.log.filter((line) => /runtime directory|XDG_RUNTIME_DIR/i.test(line)),
      [],
    );
  });

  it('loses no request through nginx when one process of two is killed under load', async (t) => {
    const [victim, survivor] = pool.pids;
    assert.ok(victim !== undefined && survivor !== undefined);
    const load = underLoad(() => mapStatus(getMap), CLIENTS);
    await sleep(500);
    process.kill(victim, 'SIGKILL');
    await until(
      'the killed process to be started again',
      async () => pool.pids.length === 2 && !pool.pids.includes(victim),
      30_000,
    );
    await until('the new process to accept', () => pool.accepting(), 30_000);
    await sleep(500);
    const { sent, failed } = await load.stop();
    t.diagnostic(`${failed.length} of ${sent} maps through nginx failed`);
    assert.ok(sent > 20, `${sent} requests sent`);
    assert.deepEqual(failed, [], `${failed.length} of ${sent} requests failed`);
    assert.deepEqual(restarts, [`qgis-fcgi:${pool.fcgiPorts[0]}`]);
    const said = logged.find(({ level }) => level === 'warn');
    assert.equal(said?.fields['child'], `qgis-fcgi:${pool.fcgiPorts[0]}`);
    assert.equal(said?.fields['signal'], 'SIGKILL');
    assert.match(said?.message ?? '', /exited \(SIGKILL\); starting it again in 250 ms/);
  });

  it('serves /ows/ again within 2 s of the pool answering once both processes were killed', async (t) => {
    for (const pid of pool.pids) process.kill(pid, 'SIGKILL');
    await until('both processes to be gone', async () => !(await pool.accepting()), 30_000);
    // The pool is back once a process answers a map itself; nginx must follow at once.
    const direct = new FastcgiQgisClient(fcgiServerAddresses(pool.fcgiPorts));
    const [poolBack, nginxBack] = await Promise.all([
      firstAnswer(() => directStatus(direct, getMap)),
      firstAnswer(() => mapStatus(getMap)),
    ]);
    const outage = nginxBack - poolBack;
    t.diagnostic(`nginx served ${outage} ms after the pool was back`);
    assert.ok(outage <= 2000, `/ows/ served ${outage} ms after the pool was back`);
  });

  it('starts nginx again when it dies, and says so', async () => {
    const nginx = pool.nginxPid;
    assert.ok(nginx !== undefined);
    process.kill(nginx, 'SIGKILL');
    // Its workers outlive the master a moment and may still answer: wait for the restart itself.
    await until('nginx to be started again', () => restarts.includes('nginx'), 30_000);
    await until('nginx to serve again', async () => (await mapStatus(getMap)) === 200, 30_000);
    assert.notEqual(pool.nginxPid, nginx);
  });

  it("puts every line of the children in the log with the child's name", () => {
    const lines = logged.filter(({ level }) => level === 'info');
    const children = new Set(lines.map(({ fields }) => fields['child']));
    // QGIS Server logs its start on stderr (QGIS_SERVER_LOG_STDERR); nginx its failed upstreams.
    for (const port of pool.fcgiPorts) assert.ok(children.has(`qgis-fcgi:${port}`), [...children].join(', '));
    assert.ok(
      lines.some(({ fields, message }) => fields['child'] === 'nginx' && /upstream/.test(message)),
      'nginx said which upstream failed',
    );
    for (const { fields } of lines) assert.ok(fields['stream'] === 'stderr' || fields['stream'] === 'stdout');
  });
});

function startPoolWith(runDir: string, supervisor: Supervisor): Promise<QgisFcgiPool> {
  return startTestPool(runDir, { processes: 2, supervisor });
}
