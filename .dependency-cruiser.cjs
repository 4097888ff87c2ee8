// The import rules of docs/architecture.md. `npm run check:layers` (part of `npm test`) fails on
// any import that breaks one. Test files are left out: they may reach across layers to set up.
const TEST = '\\.test\\.ts$';
const ENTRY = '^src/(main|launcher)\\.ts$|^src/cli/main\\.ts$';
const FOUNDATION = '^src/(errors|config|s3-settings|basemap-settings|log|checkout)\\.ts$';
const CAPABILITIES = '^src/(services|tile-cache|monitor|jobs|insight|access)/';
const ENGINES = '^src/(qgis|gdal|storage|runtime|transport)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules must not import each other, directly or through others.',
      severity: 'error',
      from: { path: '^src/', pathNot: TEST },
      to: { circular: true },
    },
    {
      name: 'composition-only-from-entry-points',
      comment: 'src/app wires every layer; only the entry points start it.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${ENTRY}|^src/app/|${TEST}` },
      to: { path: '^src/app/' },
    },
    {
      name: 'no-entry-point-imports',
      comment: 'Entry points start processes; nothing imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: TEST },
      to: { path: ENTRY },
    },
    {
      name: 'http-only-from-composition',
      comment: 'Only src/app assembles the HTTP layer; services never import it.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(app|http)/|${TEST}` },
      to: { path: '^src/http/' },
    },
    {
      name: 'capabilities-without-fastify',
      comment: 'Services, cache, monitoring, jobs and insight know nothing of HTTP frameworks.',
      severity: 'error',
      from: { path: `${CAPABILITIES}|${ENGINES}|${FOUNDATION}`, pathNot: TEST },
      to: { path: '(^|/)node_modules/(fastify|@fastify/)' },
    },
    {
      name: 'engines-below-capabilities',
      comment: 'QGIS formats, GDAL, storage and child processes import no capability, HTTP or composition.',
      severity: 'error',
      from: { path: ENGINES, pathNot: TEST },
      to: { path: `${CAPABILITIES}|^src/(http|app|cli)/` },
    },
    {
      name: 'qgis-is-the-lowest-engine',
      comment: 'src/qgis models QGIS formats as documents: it needs neither GDAL, storage nor processes.',
      severity: 'error',
      from: { path: '^src/qgis/', pathNot: TEST },
      to: { path: '^src/(gdal|storage|runtime)/' },
    },
    {
      name: 'foundation-imports-only-foundation',
      comment: 'Errors, settings and the logger are the base every layer stands on.',
      severity: 'error',
      from: { path: FOUNDATION },
      to: { path: '^src/', pathNot: FOUNDATION },
    },
    {
      name: 'cli-is-an-http-client',
      comment:
        'The steward command talks to the API over HTTP; it may import the shapes of replies only, and the zip writer that packs a project for publishing.',
      severity: 'error',
      from: { path: '^src/cli/', pathNot: TEST },
      to: {
        path: '^src/',
        pathNot: `^src/cli/|${FOUNDATION}|^src/monitor/protocol\\.ts$|^src/storage/zip-(writer|format)\\.ts$`,
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'src-without-tests-or-console',
      comment: 'Production code never imports tests, benchmarks or the web console.',
      severity: 'error',
      from: { path: '^src/', pathNot: TEST },
      to: { path: '^(test|bench|web)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
