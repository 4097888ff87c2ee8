// Runs test files with Node's test runner through tsx: the files named, else every
// src/**/*.test.ts and test/**/*.test.ts; `--unit` runs only src/**/*.test.ts, which need no
// engine. The storage tests run twice: with the addons of native/ and as without them.
// The whole suite runs against the machine's QGIS (3.22); then the files whose results depend on
// the QGIS release run again against each release of a trixie root (scripts/qgis-roots.sh), with
// STEWARD_TEST_QGIS naming it. Named files run against the release STEWARD_TEST_QGIS names, if any.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What QGIS Server, PyQGIS or MapProxy decide: drawing, styles, stored projects, tiles, the plugin. */
const VERSION_DEPENDENT = [
  'test/cache.test.ts',
  'test/datasource-repair.test.ts',
  'test/feature-queries.test.ts',
  'test/layer-extents.test.ts',
  'test/layer-properties.test.ts',
  'test/layer-styles.test.ts',
  'test/layer-tree.test.ts',
  'test/monitoring.test.ts',
  'test/plugin-fcgi-crash.test.ts',
  'test/ows-access.test.ts',
  'test/ows-access-properties.test.ts',
  'test/plugin-python.test.ts',
  'test/pool-geopackage.test.ts',
  'test/postgres.test.ts',
  'test/postgres-refresh.test.ts',
  'test/project-edits-oracle.test.ts',
  'test/project-fidelity.test.ts',
  'test/project-services.test.ts',
  'test/qgis-made-projects.test.ts',
  'test/styles-qml.test.ts',
  'test/styles-renderers.test.ts',
  'test/styles-replicas.test.ts',
  'test/style-preview.test.ts',
  'test/styles.test.ts',
  'test/symbology-catalogue.test.ts',
  'test/web-layer-projects.test.ts',
  'test/wms-names.test.ts',
];
const ROOT_RELEASES = ['3.40', '3.44'];

function testFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return testFiles(path);
    return entry.endsWith('.test.ts') ? [path] : [];
  });
}

/** The storage tests, which run again with the addon left out (test/support/without-addon.ts). */
const STORAGE = /^src\/storage\//;

function run(files, { release, withoutAddon = false } = {}) {
  const env = { ...process.env, QT_QPA_PLATFORM: 'offscreen' };
  if (release !== undefined) env.STEWARD_TEST_QGIS = release;
  if (withoutAddon) env.STEWARD_TEST_ADDON = 'absent';
  const preload = withoutAddon ? ['--import', './test/support/without-addon.ts'] : [];
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      ...preload,
      '--test',
      '--test-concurrency=2',
      '--test-force-exit',
      '--test-reporter=spec',
      ...files,
    ],
    { stdio: 'inherit', env },
  );
  return result.status ?? 1;
}

const args = process.argv.slice(2);
const unit = args.includes('--unit');
const selected = args.filter((arg) => arg !== '--unit');
const folders = unit ? ['src'] : ['src', 'test'];
const files = selected.length > 0 ? selected : folders.flatMap(testFiles).sort();
let status = run(files);
const storage = files.filter((file) => STORAGE.test(file));
if (storage.length > 0) {
  console.log('\nThe storage tests without the addons of native/:');
  status = run(storage, { withoutAddon: true }) || status;
}
if (selected.length === 0 && !unit) {
  for (const release of ROOT_RELEASES) {
    console.log(`\nThe version-dependent tests against QGIS ${release}:`);
    status = run(VERSION_DEPENDENT, { release }) || status;
  }
}
process.exit(status);
