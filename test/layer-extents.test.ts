import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels } from './support/png.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { ownLayerMap } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';

type Extent = [number, number, number, number];

describe('a project a PyQGIS script wrote without asking its layers for their extents', () => {
  let stack: Stack;
  let data: Fixtures;
  const project = 'scripted';
  let file: string;
  /** Each layer's extent as QGIS computes it, by layer name. */
  let extents: Record<string, Extent>;

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    mkdirSync(join(stack.projectsDir, project));
    file = join(stack.projectsDir, project, `${project}.qgs`);
    extents = JSON.parse(runPyqgisScript('write_project_as_script.py', file, data.geopackage, data.rgbTiff)) as Record<
      string,
      Extent
    >;
  });
  after(async () => {
    await stack.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('describes each layer with the extent QGIS computes for it', async () => {
    for (const [layer, [xmin, ymin, xmax, ymax]] of Object.entries(extents)) {
      const info = (await stack.call('GET', `/api/projects/${project}/layers/${layer}`)).body as { bbox: string };
      assert.deepEqual(info.bbox.split(/[ ,]+/).map(Number), [xmin, ymin, xmax, ymax], layer);
    }
  });

  it("draws each layer's map as QGIS Server's own GetMap of that extent", async () => {
    for (const [layer, [xmin, ymin, xmax, ymax]] of Object.entries(extents)) {
      const direct = await ownLayerMap(stack.qgis, file, layer, [xmin, ymin, xmax, ymax]);
      assert.equal(direct.status, 200);
      const own = decodePng(Buffer.from(await direct.arrayBuffer()));
      assert.ok(own.paintedPixels() > 0, `QGIS Server draws ${layer}`);
      const response = await fetch(`${stack.api.url}/api/projects/${project}/layers/${layer}/map`);
      const body = Buffer.from(await response.arrayBuffer());
      assert.equal(response.status, 200, body.toString('utf8').slice(0, 300));
      assert.equal(differingPixels(decodePng(body), own), 0, layer);
    }
  });
});
