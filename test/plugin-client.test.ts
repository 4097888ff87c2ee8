/** Runs the Python unit tests of the plugin's connection thread (test/plugin/test_client.py). */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const repo = resolve(import.meta.dirname, '..');

test('the plugin client frames, answers and reconnects (Python unittest)', async () => {
  const { stderr } = await promisify(execFile)('/usr/bin/python3', [join(repo, 'test/plugin/test_client.py')], {
    env: { ...process.env, PYTHONPATH: join(repo, 'plugin'), PYTHONDONTWRITEBYTECODE: '1' },
  }).catch((error: Error & { stderr?: string }) => assert.fail(error.stderr ?? error.message));
  assert.match(stderr, /^Ran [1-9]\d* tests? in .*\n\nOK\n$/m);
});
