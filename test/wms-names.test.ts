import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

import { assertLoads, type CacheStack, POLYGON_TILE, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { filesUnder } from './support/mapproxy.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels, type Image } from './support/png.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { ownLayerMap, ows, publishedLayers } from './support/qgis.js';
import { POLYGONS, seededLevels, waitForJob } from './support/seeding.js';

/** The raster layer of the project the PyQGIS script writes. */
const RASTER = 'rgb';

const MODES = {
  'short-names': 'their short names',
  'layer-ids': 'their ids (WMSUseLayerIDs, a bool as QGIS Desktop writes it)',
  'layer-ids-as-int': 'their ids (WMSUseLayerIDs, an int as PyQGIS writes True)',
} as const;

async function png(response: Response): Promise<Image> {
  const body = Buffer.from(await response.arrayBuffer());
  assert.equal(response.status, 200, body.toString('utf8').slice(0, 500));
  assert.match(response.headers.get('content-type') ?? '', /^image\/png/);
  return decodePng(body);
}

for (const [mode, names] of Object.entries(MODES)) {
  describe(`a project written by PyQGIS whose layers QGIS Server publishes under ${names}`, () => {
    let cs: CacheStack;
    let data: Fixtures;
    const project = mode.replaceAll('-', '_');
    let file: string;
    /** The name QGIS Server publishes each layer under, by layer name, as PyQGIS set it up. */
    let published: Record<string, string>;
    const api = (path: string): Promise<Response> => fetch(`${cs.stack.api.url}/api/projects/${project}${path}`);
    const direct = (parameters: Record<string, string>): Promise<Response> =>
      ows(cs.stack.qgis, file, { SERVICE: 'WMS', VERSION: '1.3.0', ...parameters });

    before(async () => {
      data = makeFixtures();
      cs = await startCacheStack();
      mkdirSync(join(cs.stack.projectsDir, project));
      file = cs.qgsFile(project);
      const written = runPyqgisScript('write_wms_names_project.py', file, data.geopackage, data.rgbTiff, mode);
      published = JSON.parse(written) as Record<string, string>;
    });
    after(async () => {
      await cs.stop();
      rmSync(data.dir, { recursive: true, force: true });
    });

    it('is published by QGIS Server under those names, and checked as served', async () => {
      assert.notEqual(published['polygons'], 'polygons');
      assert.deepEqual(new Set(await publishedLayers(cs.stack.qgis, file)), new Set(Object.values(published)));
      const check = await cs.stack.call('GET', `/api/projects/${project}/check`);
      assert.equal((check.body as { status: string }).status, 'ok', JSON.stringify(check.body));
    });

    it("draws each layer's map as QGIS Server's own GetMap by the published name", async () => {
      for (const [layer, wmsName] of Object.entries(published)) {
        const info = (await cs.stack.call('GET', `/api/projects/${project}/layers/${layer}`)).body as { bbox: string };
        const own = await png(await ownLayerMap(cs.stack.qgis, file, wmsName, info.bbox.split(/[ ,]+/)));
        assert.ok(own.paintedPixels() > 0, `QGIS Server draws ${wmsName}`);
        const map = await png(await api(`/layers/${layer}/map`));
        assert.equal(differingPixels(map, own), 0, layer);
      }
    });

    it("draws the console's view of several layers as QGIS Server's own GetMap by the published names", async () => {
      const layers = ['rgb', 'polygons', 'lines'];
      const bbox = '100000,5500000,350000,5800000';
      const view = await png(
        await api(`/wms?layers=${layers.join(',')}&bbox=${bbox}&crs=EPSG:3857&width=300&height=360`),
      );
      const own = await png(
        await direct({
          REQUEST: 'GetMap',
          LAYERS: layers.map((layer) => published[layer] ?? '').join(','),
          STYLES: '',
          CRS: 'EPSG:3857',
          BBOX: bbox,
          WIDTH: '300',
          HEIGHT: '360',
          FORMAT: 'image/png',
          TRANSPARENT: 'TRUE',
        }),
      );
      assert.ok(own.paintedPixels() > 0);
      assert.equal(differingPixels(view, own), 0);
    });

    it("gives each layer's SLD and legend as QGIS Server's GetStyles and GetLegendGraphic by the published name", async () => {
      for (const [layer, wmsName] of Object.entries(published)) {
        const sld = await api(`/layers/${layer}/style.sld`);
        const sldText = await sld.text();
        assert.equal(sld.status, 200, sldText);
        if (layer === RASTER) {
          // QGIS Server's GetStyles holds no style for a raster: Steward writes Desktop's "Save as SLD"
          // (compared with PyQGIS in raster-sld.test.ts), whatever name the layer is published under.
          assert.match(sldText, /<sld:RasterSymbolizer>/, layer);
        } else {
          // The current style's rules as QGIS Server writes them for the published name, named as
          // Desktop names them (after the layer).
          const ownText = await (await direct({ REQUEST: 'GetStyles', LAYERS: wmsName })).text();
          const rules = (text: string): string =>
            /<se:FeatureTypeStyle>[\s\S]*<\/se:FeatureTypeStyle>/.exec(text)?.[0].replace(/\n\s*/g, '') ?? text;
          assert.equal(rules(sldText), rules(ownText), layer);
          if (sldText !== ownText) assert.ok(sldText.includes(`<se:Name>${layer}</se:Name>`), layer);
        }
        const legend = await png(await api(`/layers/${layer}/legend`));
        const own = await png(
          await direct({ REQUEST: 'GetLegendGraphic', LAYER: wmsName, FORMAT: 'image/png', SLD_VERSION: '1.1.0' }),
        );
        assert.equal(differingPixels(legend, own), 0, layer);
      }
    });

    it('has MapProxy ask QGIS Server for the published names, when seeding and for tiles', async () => {
      assert.deepEqual(await cs.stack.call('POST', `/api/projects/${project}/cache/reset`), {
        status: 200,
        body: true,
      });
      await assertLoads(cs.configFile(project));
      const seed = await cs.stack.call('POST', `/api/projects/${project}/cache/seed`, {
        min_zoom: 0,
        max_zoom: POLYGON_TILE.z,
        layers: ['polygons'],
      });
      assert.equal(seed.status, 202, JSON.stringify(seed.body));
      const done = await waitForJob((...args) => cs.stack.call(...args), (seed.body as { id: string }).id);
      assert.equal(done.state, 'succeeded', done.error ?? '');
      const dir = join(cs.configDir, 'cache_data', project, 'polygons');
      const cached = filesUnder(dir, '.png').map((tile) => relative(dir, tile).replace(/\.png$/, ''));
      assert.deepEqual(cached.sort(), seededLevels(POLYGONS, 0, POLYGON_TILE.z));

      const map = await png(await api('/layers/polygons/map'));
      assert.deepEqual((await cs.tile(project, 'polygons', POLYGON_TILE)).pixel(128, 128), map.pixel(200, 200));
      assert.deepEqual((await cs.tile(project, 'rgb', POLYGON_TILE)).pixel(128, 128), [200, 40, 90, 255]);
      assert.ok((await cs.tile(project, 'lines', POLYGON_TILE)).paintedPixels() > 0, 'the lines cross in the tile');
    });
  });
}
