/**
 * Runs the plugin's Python unit tests: its connection thread (test/plugin/test_client.py, stdlib
 * only), its record of cached projects (test/plugin/test_projects.py, with PyQGIS) and its log
 * capture (test/plugin/test_logbuffer.py).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const repo = resolve(import.meta.dirname, '..');

async function pythonTests(file: string): Promise<void> {
  const { stderr } = await promisify(execFile)('/usr/bin/python3', [join(repo, 'test/plugin', file)], {
    env: {
      ...process.env,
      PYTHONPATH: join(repo, 'plugin'),
      PYTHONDONTWRITEBYTECODE: '1',
      QT_QPA_PLATFORM: 'offscreen',
    },
  }).catch((error: Error & { stderr?: string }) => assert.fail(error.stderr ?? error.message));
  assert.match(stderr, /^Ran [1-9]\d* tests? in .*\n\nOK\n$/m);
}

test('the plugin client frames, answers and reconnects (Python unittest)', () => pythonTests('test_client.py'));

test('the plugin records each project object QGIS Server serves until it is deleted (Python unittest)', () =>
  pythonTests('test_projects.py'));

test('the plugin logs QGIS messages and a line per request served (Python unittest)', () =>
  pythonTests('test_logbuffer.py'));
