/**
 * Runs the plugin's Python tests with the PyQGIS of the release under test (TEST_QGIS): its
 * connection thread, own log and safe point (test/plugin/test_client.py, stdlib only), its record
 * of cached projects (test_projects.py), its log capture (test_logbuffer.py), its reading of
 * Steward's access rules (test_access.py; test/ows-access.test.ts enforces them), the turns of WFS-T
 * Transactions (test_turns.py; test/pool-geopackage.test.ts on the pool), and the plugin
 * inside QGIS Server, requests served in process by QgsServer().handleRequest (test_filters.py).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { test } from './support/node-test.js';
import { TEST_QGIS } from './support/qgis-runtime.js';

const repo = resolve(import.meta.dirname, '..');

async function pythonTests(file: string): Promise<void> {
  const { command, args } = TEST_QGIS.python(join(repo, 'test/plugin', file), []);
  const { stderr } = await promisify(execFile)(command, args, {
    env: {
      ...process.env,
      PYTHONPATH: join(repo, 'plugin'),
      PYTHONDONTWRITEBYTECODE: '1',
      QT_QPA_PLATFORM: 'offscreen',
    },
    timeout: 120_000,
  }).catch((error: Error & { stderr?: string }) => assert.fail(error.stderr ?? error.message));
  assert.match(stderr, /^Ran [1-9]\d* tests? in .*\n\nOK\n$/m);
}

test(`the plugin client frames, answers and reconnects (Python unittest, ${TEST_QGIS.name})`, () =>
  pythonTests('test_client.py'));

test(`the plugin records each project object QGIS Server serves until it is deleted (${TEST_QGIS.name})`, () =>
  pythonTests('test_projects.py'));

test(`the plugin reads Steward's access rules, and opens nothing it cannot read (${TEST_QGIS.name})`, () =>
  pythonTests('test_access.py'));

test(`the plugin logs QGIS messages and a line per request served (${TEST_QGIS.name})`, () =>
  pythonTests('test_logbuffer.py'));

test(`the plugin has WFS-T Transactions of a host's processes take turns (${TEST_QGIS.name})`, () =>
  pythonTests('test_turns.py'));

test(`the plugin inside QGIS Server: stats, invalidations, reloads, logs, its threads (${TEST_QGIS.name})`, () =>
  pythonTests('test_filters.py'));
