import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, afterEach, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { projectProblems, publishedLayers } from './support/qgis.js';
import { fillStyle, polygonLayer } from './support/write-bodies.js';

const PROCESSES = 3;
const LAYERS_PER_PROCESS = 6;
/** Current-style switches per process between two styles whose names have the same length. */
const SWITCHES = 12;

/** Where one project is reached: its API paths and QGIS Server's MAP for it. */
interface Target {
  /** The API path of `rest` under the project, with the schema when there is one. */
  path(rest?: string): string;
  createBody: Record<string, string>;
  map: string;
}

async function expectStatus(
  api: ApiProcess,
  status: number,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<unknown> {
  const reply = await api.call(method, path, body);
  assert.equal(reply.status, status, `${method} ${path} through ${api.url}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

const layerName = (process: number, index: number): string => `p${process}-layer${index}`;
const styleName = (process: number, which: 'a' | 'b'): string => `p${process}-style-${which}`;

/**
 * What one API process does to the shared project: two styles, its layers (two requests at a time),
 * a style applied to each, its last layer removed again, then its first layer's current style
 * switched back and forth. Each of these writes changes the project file that all processes share.
 */
async function writeThrough(api: ApiProcess, index: number, target: Target, geopackage: string): Promise<void> {
  for (const which of ['a', 'b'] as const) {
    await expectStatus(
      api,
      201,
      'POST',
      target.path('/styles'),
      fillStyle(styleName(index, which), which === 'a' ? '#ff0000' : '#0000ff'),
    );
  }
  const layers = Array.from({ length: LAYERS_PER_PROCESS }, (_, layer) => layerName(index, layer));
  const addAndStyle = async (names: string[]): Promise<void> => {
    for (const name of names) {
      await expectStatus(api, 201, 'POST', target.path('/layers'), polygonLayer(name, geopackage));
      await expectStatus(api, 200, 'POST', target.path(`/layers/${name}/style`), {
        name: styleName(index, 'a'),
        current: true,
      });
    }
  };
  await Promise.all([
    addAndStyle(layers.filter((_, at) => at % 2 === 0)),
    addAndStyle(layers.filter((_, at) => at % 2 === 1)),
  ]);
  await expectStatus(api, 200, 'DELETE', target.path(`/layers/${layerName(index, LAYERS_PER_PROCESS - 1)}`));
  for (let switched = 1; switched <= SWITCHES; switched++) {
    const style = styleName(index, switched % 2 === 1 ? 'b' : 'a');
    await expectStatus(api, 200, 'POST', target.path(`/layers/${layerName(index, 0)}/style`), {
      name: style,
      current: true,
    });
  }
}

/** Every process writes to one project at once; then every process and QGIS Server see every write. */
async function checkNoUpdateIsLost(
  apis: ApiProcess[],
  target: Target,
  qgis: QgisServerProcess,
  geopackage: string,
): Promise<void> {
  const [first] = apis;
  assert.ok(first);
  await expectStatus(first, 201, 'POST', '/api/projects/', target.createBody);
  await Promise.all(apis.map((api, index) => writeThrough(api, index, target, geopackage)));

  const expectedLayers = apis
    .flatMap((_, index) => Array.from({ length: LAYERS_PER_PROCESS - 1 }, (__, layer) => layerName(index, layer)))
    .sort();
  const expectedStyles = apis.flatMap((_, index) => [styleName(index, 'a'), styleName(index, 'b')]).sort();
  const lastSwitch = SWITCHES % 2 === 1 ? 'b' : 'a';
  for (const api of apis) {
    assert.deepEqual(
      ((await expectStatus(api, 200, 'GET', target.path('/layers'))) as string[]).sort(),
      expectedLayers,
      `layers through ${api.url}`,
    );
    assert.deepEqual(
      ((await expectStatus(api, 200, 'GET', target.path('/styles'))) as string[]).sort(),
      expectedStyles,
      `styles through ${api.url}`,
    );
    for (const [index] of apis.entries()) {
      for (const layer of [0, 1]) {
        const info = (await expectStatus(api, 200, 'GET', target.path(`/layers/${layerName(index, layer)}`))) as {
          current_style: string;
          styles: string[];
        };
        const current = styleName(index, layer === 0 ? lastSwitch : 'a');
        assert.equal(info.current_style, current, `current style of ${layerName(index, layer)} through ${api.url}`);
      }
    }
  }
  const problemsBefore = projectProblems(qgis).length;
  assert.deepEqual(
    (await publishedLayers(qgis, target.map)).sort(),
    expectedLayers,
    'QGIS Server publishes every layer',
  );
  assert.deepEqual(projectProblems(qgis).slice(problemsBefore), [], 'QGIS Server loads the project without complaint');
}

describe('several API processes writing to one project at once', () => {
  let db: TestDatabase;
  let qgis: QgisServerProcess;
  let data: Fixtures;
  let root: string;
  const apis: ApiProcess[] = [];
  /** The API processes, all on one new projects folder. */
  const startApis = async (env: Record<string, string> = {}): Promise<{ apis: ApiProcess[]; projectsDir: string }> => {
    const projectsDir = mkdtempSync(join(root, 'projects-'));
    const started = Promise.all(
      Array.from({ length: PROCESSES }, () =>
        startApiProcess({ STEWARD_QGISSERVER_URL: qgis.url, STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir, ...env }),
      ),
    );
    apis.push(...(await started));
    return { apis: [...apis], projectsDir };
  };

  before(async () => {
    // The database first: it sets PGSERVICEFILE, which QGIS Server and the API processes inherit.
    db = await startTestDatabase();
    qgis = await QgisServerProcess.start();
    data = makeFixtures();
    root = mkdtempSync(join(tmpdir(), 'steward-multi-'));
  });
  afterEach(async () => {
    await Promise.all(apis.splice(0).map((api) => api.kill()));
  });
  after(async () => {
    await qgis?.stop();
    await db?.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('lose no update on one projects folder', async () => {
    const project = 'together';
    const { apis: writers, projectsDir } = await startApis();
    const target: Target = {
      path: (rest = '') => `/api/projects/${project}${rest}`,
      createBody: { name: project, author: 'everyone' },
      map: join(projectsDir, project, `${project}.qgs`),
    };
    await checkNoUpdateIsLost(writers, target, qgis, data.geopackage);
  });

  it('lose no update on one database', async () => {
    const [project, schema] = ['together', 'shared'];
    const { apis: writers } = await startApis({ STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service });
    const target: Target = {
      path: (rest = '') => `/api/projects/${project}${rest}?schema=${schema}`,
      createBody: { name: project, author: 'everyone', schema },
      map: `postgresql:?service=${db.service}&schema=${schema}&project=${project}`,
    };
    await checkNoUpdateIsLost(writers, target, qgis, data.geopackage);
  });
});
