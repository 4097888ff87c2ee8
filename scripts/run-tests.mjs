// Runs every test file (src/**/*.test.ts and test/**/*.test.ts) with Node's test runner through tsx.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function testFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return testFiles(path);
    return entry.endsWith('.test.ts') ? [path] : [];
  });
}

const selected = process.argv.slice(2);
const files = selected.length > 0 ? selected : ['src', 'test'].flatMap(testFiles).sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } },
);
process.exit(result.status ?? 1);
