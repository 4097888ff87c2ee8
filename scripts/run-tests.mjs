// Runs test files with Node's test runner through tsx: the files named, else every
// src/**/*.test.ts and test/**/*.test.ts; `--unit` runs only src/**/*.test.ts.
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

const args = process.argv.slice(2);
const unit = args.includes('--unit');
const selected = args.filter((arg) => arg !== '--unit');
const folders = unit ? ['src'] : ['src', 'test'];
const files = selected.length > 0 ? selected : folders.flatMap(testFiles).sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } },
);
process.exit(result.status ?? 1);
