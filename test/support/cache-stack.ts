import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Config } from '../../src/config.js';
import { MapProxyProcess } from '../../src/runtime/mapproxy.js';
import { distinctFreePorts } from '../../src/runtime/qgis-fcgi-pool.js';
import { type QgisServerOptions } from '../../src/runtime/qgis-server.js';
import { readS3Settings } from '../../src/s3-settings.js';
import { ProjectRepository } from '../../src/services/repository.js';
import { FilesystemStore } from '../../src/storage/filesystem-store.js';
import { type ProjectRef } from '../../src/storage/project-store.js';
import { createTileCache, type TileCache } from '../../src/tile-cache/factory.js';
import { type Fixtures } from './fixtures.js';
import { loadWithMapProxy, setFillColour, tileAt } from './mapproxy.js';
import { decodePng, type Image } from './png.js';
import { SYSTEM_QGIS, TEST_QGIS } from './qgis-runtime.js';
import { selectedStackKind, type Stack, startStack } from './stack.js';
import { selectedStorage, type StorageKind } from './test-storage.js';
import { until } from './wait.js';
import { fillStyle } from './write-bodies.js';

const GUNICORN_CONFIG = join(import.meta.dirname, '..', '..', 'deploy', 'gunicorn.conf.py');

/**
 * How the tests' MapProxy serves: under gunicorn, as `npm start` runs it, with the machine's own
 * MapProxy; the development server of a root's release (its MapProxy, which the root has no
 * gunicorn for) when another release is tested.
 */
function mapproxyServer(): { gunicornConfig: string } | { command: readonly string[] } {
  return TEST_QGIS === SYSTEM_QGIS ? { gunicornConfig: GUNICORN_CONFIG } : { command: TEST_QGIS.mapproxyUtil };
}

/** The API and QGIS Server with the cache enabled, MapProxy serving its configurations. */
export interface CacheStack {
  stack: Stack;
  mapproxy: MapProxyProcess;
  configDir: string;
  /**
   * A cache service of its own on the same folders and bucket, standing in for the styles code,
   * which calls `layerStyleChanged` inside the API; it reads projects from the projects folder
   * (file storage).
   */
  cache: TileCache;
  configFile(app: string): string;
  qgsFile(project: string): string;
  /** Where clients get tiles: nginx in front of MapProxy with access control on (production stack), else MapProxy. */
  tilesUrl: string;
  /** A WMTS tile of the layer through MapProxy, decoded; `token` sent as the bearer. */
  tile(app: string, layer: string, at: { z: number; x: number; y: number }, token?: string): Promise<Image>;
  stop(): Promise<void>;
}

export async function startCacheStack(
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
  qgisOptions: QgisServerOptions = {},
  storageKind: StorageKind = selectedStorage(),
): Promise<CacheStack> {
  const configDir = mkdtempSync(join(tmpdir(), 'steward-mapproxy-'));
  // With access control on, the pool's nginx serves MapProxy, asking the API, as `npm start` has it.
  const gated = overrides.apiToken !== undefined && selectedStackKind() === 'production';
  const [mapproxyPort = 0, gatePort] = await distinctFreePorts(gated ? 2 : 1);
  const tilesGate =
    gatePort === undefined
      ? {}
      : { tilesGate: { listen: `127.0.0.1:${gatePort}`, mapproxy: `127.0.0.1:${mapproxyPort}` } };
  const config = {
    mapproxyProjectsDir: configDir,
    mapproxyUrl: `http://127.0.0.1:${mapproxyPort}/`,
    cacheS3Bucket: undefined,
    cacheS3Dir: '/mapproxy/cache',
    ...overrides,
  };
  const stack = await startStack(config, { ...qgisOptions, ...tilesGate }, storageKind);
  const mapproxy = await MapProxyProcess.start(configDir, { env, port: mapproxyPort, ...mapproxyServer() });
  const tilesUrl = gatePort === undefined ? mapproxy.url : `http://127.0.0.1:${gatePort}`;
  const repository = new ProjectRepository(new FilesystemStore(stack.projectsDir));
  const projectUrl = async (ref: ProjectRef): Promise<URL> => {
    const url = new URL(stack.qgis.url);
    url.searchParams.set('MAP', await repository.store.mapParameter(ref));
    return url;
  };
  const s3 = readS3Settings({ ...process.env, ...env });
  const cache = await createTileCache({ ...config, s3 }, repository, projectUrl);
  if (!cache) throw new Error('the cache is enabled in this stack');
  return {
    stack,
    mapproxy,
    configDir,
    cache,
    tilesUrl,
    configFile: (app) => join(configDir, `${app}.yaml`),
    qgsFile: (project) => join(stack.projectsDir, project, `${project}.qgs`),
    async tile(app, layer, { z, x, y }, token) {
      const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
      const url = `${tilesUrl}/${app}/wmts/${layer}/GLOBAL_WEBMERCATOR/${z}/${x}/${y}.png`;
      const response = await fetch(url, { headers });
      const body = Buffer.from(await response.arrayBuffer());
      assert.equal(response.status, 200, body.toString('utf8').slice(0, 500));
      assert.equal(response.headers.get('content-type'), 'image/png');
      return decodePng(body);
    },
    async stop() {
      cache.close();
      await mapproxy.stop();
      await stack.stop();
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}

/** Asserts that MapProxy's own loader reads the file without a complaint. */
export async function assertLoads(file: string): Promise<void> {
  const { loaded, warnings } = await loadWithMapProxy(file);
  assert.ok(loaded, `MapProxy cannot load ${file}: ${warnings.join('\n')}`);
  // The remarks MapProxy makes about a project without layers, which it serves as such (1.x, then
  // 4.0's words), and MapProxy 4.0's advice about the demo service, which Steward offers on purpose.
  const expected = new Set([
    'Missing layers section',
    "'layers' is a required property in root",
    'Application has demo page enabled. It is recommended to disable this in production.',
  ]);
  assert.deepEqual(
    warnings.filter((line) => !expected.has(line)),
    [],
    file,
  );
}

/** The body that adds the polygons fixture as layer `polygons`. */
export function polygonsLayer(data: Fixtures): { type: string; name: string; datasource: string } {
  return { type: 'vector', name: 'polygons', datasource: `${data.geopackage}|layername=polygons` };
}

/** The tile over the middle of the polygons fixture (1..3 E, 44..46 N): the polygon fills it. */
export const POLYGON_TILE = tileAt(2, 45, 8);

const CENTRE = 128;
const DEFAULT_FILL = [229, 182, 54, 255];
/** The fill colour every style change below gives the layer. */
const NEW_FILL = [30, 60, 200, 255];

/** Waits until QGIS Server draws the layer's middle in `rgba`. */
async function untilQgisDraws(cs: CacheStack, project: string, layer: string, rgba: number[]): Promise<void> {
  await until(
    `QGIS Server to draw ${layer} in ${rgba.join()}`,
    async () => {
      const response = await fetch(`${cs.stack.api.url}/api/projects/${project}/layers/${layer}/map`);
      return (
        decodePng(Buffer.from(await response.arrayBuffer()))
          .pixel(200, 200)
          .join() === rgba.join()
      );
    },
    10_000,
    100,
  );
}

/**
 * The styles code's part, simulated: the colour is rewritten in the .qgs and `layerStyleChanged`
 * called on a cache service of the test's own. Until then MapProxy keeps serving the stale tile.
 */
export function simulatedStyleChange(cs: CacheStack, project: string, layer: string): () => Promise<void> {
  return async () => {
    setFillColour(cs.qgsFile(project), layer, NEW_FILL.join(','));
    await untilQgisDraws(cs, project, layer, NEW_FILL);
    const stale = await cs.tile(project, layer, POLYGON_TILE);
    assert.deepEqual(stale.pixel(CENTRE, CENTRE), DEFAULT_FILL, 'until cleared, MapProxy serves the cached tile');
    await cs.cache.service.layerStyleChanged({ name: project, schema: 'public' }, layer);
  };
}

/** The change through the API: a new style made the layer's current one. */
export function apiStyleChange(cs: CacheStack, project: string, layer: string): () => Promise<void> {
  return async () => {
    const [r, g, b] = NEW_FILL.map((channel) => channel.toString(16).padStart(2, '0'));
    assert.equal(
      (await cs.stack.call('POST', `/api/projects/${project}/styles`, fillStyle('recoloured', `#${r}${g}${b}`))).status,
      201,
    );
    const applied = await cs.stack.call('POST', `/api/projects/${project}/layers/${layer}/style`, {
      name: 'recoloured',
      current: true,
    });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
  };
}

/**
 * A tile is cached, the layer's current style changes (`changeStyle`), the layer's store is then
 * empty, and the next tile has the new colour and is cached again.
 */
export async function assertStyleChangeClearsTiles(
  cs: CacheStack,
  project: string,
  layer: string,
  storedTiles: () => Promise<number>,
  changeStyle: () => Promise<void>,
): Promise<void> {
  const before = await cs.tile(project, layer, POLYGON_TILE);
  assert.deepEqual(before.pixel(CENTRE, CENTRE), DEFAULT_FILL, 'the default polygon fill');
  assert.ok((await storedTiles()) > 0, 'MapProxy stored the tile');
  await changeStyle();
  await untilQgisDraws(cs, project, layer, NEW_FILL);
  assert.equal(await storedTiles(), 0, 'the layer tile store is empty');
  const after = await cs.tile(project, layer, POLYGON_TILE);
  assert.deepEqual(after.pixel(CENTRE, CENTRE), NEW_FILL, 'the next tile has the new colour');
  assert.ok((await storedTiles()) > 0, 'and is cached again');
}
