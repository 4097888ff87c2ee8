import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { unzipSync } from 'fflate';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { ows, projectProblems, publishedLayers } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';

const WRITER = join(import.meta.dirname, 'support', 'pyqgis', 'write_project.py');
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle cx="5" cy="5" r="4"/></svg>';
/** A 1 x 1 grey PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==';

/** The SVG and the image QGIS fills the polygons with, beside the fixtures. */
function fillFiles(data: Fixtures): { svg: string; image: string } {
  return { svg: join(data.dir, 'hatch.svg'), image: join(data.dir, 'texture.png') };
}

function writeWithQgis(path: string, data: Fixtures): void {
  const { svg, image } = fillFiles(data);
  writeFileSync(svg, SVG);
  writeFileSync(image, Buffer.from(PNG, 'base64'));
  execFileSync('/usr/bin/python3', [WRITER, path, data.geopackage, data.rgbTiff, svg, image], {
    env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
    stdio: 'pipe',
  });
}

function projectText(path: string): string {
  if (!path.endsWith('.qgz')) return readFileSync(path, 'utf8');
  const entries = unzipSync(readFileSync(path));
  const name = Object.keys(entries).find((entry) => entry.endsWith('.qgs')) ?? '';
  return new TextDecoder().decode(entries[name]);
}

for (const extension of ['qgs', 'qgz'] as const) {
  describe(`a .${extension} project written by PyQGIS`, () => {
    let stack: Stack;
    let data: Fixtures;
    const name = `desktop_${extension}`;
    let file: string;

    before(async () => {
      data = makeFixtures();
      stack = await startStack();
      mkdirSync(join(stack.projectsDir, name));
      file = join(stack.projectsDir, name, `${name}.${extension}`);
      writeWithQgis(file, data);
    });
    after(() => stack.stop());

    it('is listed and described', async () => {
      assert.deepEqual((await stack.call('GET', '/api/projects')).body, [name]);
      const info = (await stack.call('GET', `/api/projects/${name}`)).body as Record<string, string>;
      assert.equal(info['author'], 'QGIS Desktop user');
      assert.equal(info['crs'], 'EPSG:4326');
    });

    it('has its layers read with correct metadata', async () => {
      assert.deepEqual(
        new Set((await stack.call('GET', `/api/projects/${name}/layers`)).body as string[]),
        new Set(['polygons', 'lines', 'rgb']),
      );
      const lines = (await stack.call('GET', `/api/projects/${name}/layers/lines`)).body as Record<string, unknown>;
      assert.equal(lines['geometry'], 'MultiLineString');
      assert.equal(lines['crs'], 'EPSG:4326');
      assert.equal(lines['bbox'], '1 44, 3 46');
      assert.equal(lines['valid'], true, 'the relative path QGIS wrote is resolved against the project');
      const rgb = (await stack.call('GET', `/api/projects/${name}/layers/rgb`)).body as Record<string, unknown>;
      assert.equal(rgb['bands'], 3);
      assert.equal(rgb['valid'], true);
    });

    it('has a missing SVG and image of a style checked as QGIS wrote their paths, until they are back', async () => {
      interface Check {
        status: string;
        layers: { name: string; status: string; findings: { kind: string; message: string }[] }[];
      }
      const polygons = async () => {
        const { status, body } = await stack.call('GET', `/api/projects/${name}/check`);
        assert.equal(status, 200, JSON.stringify(body));
        return (body as Check).layers.find((layer) => layer.name === 'polygons');
      };
      assert.deepEqual(await polygons(), { name: 'polygons', status: 'ok', findings: [] });
      const { svg, image } = fillFiles(data);
      for (const path of [svg, image]) renameSync(path, `${path}.away`);
      try {
        const broken = await polygons();
        assert.equal(broken?.status, 'degraded');
        assert.deepEqual(
          broken?.findings.map(({ kind }) => kind),
          ['svg', 'image'],
        );
        assert.match(broken?.findings[0]?.message ?? '', /^SVG file \S*hatch\.svg is missing$/);
        assert.match(broken?.findings[1]?.message ?? '', /^image file \S*texture\.png is missing$/);
      } finally {
        for (const path of [svg, image]) renameSync(`${path}.away`, path);
      }
      assert.deepEqual(await polygons(), { name: 'polygons', status: 'ok', findings: [] });
    });

    it('takes a new layer and loses one, and QGIS Server still draws the rest', async () => {
      const added = await stack.call('POST', `/api/projects/${name}/layers`, {
        type: 'vector',
        name: 'points',
        datasource: `${data.geopackage}|layername=points`,
      });
      assert.equal(added.status, 201);
      assert.deepEqual(await stack.call('DELETE', `/api/projects/${name}/layers/polygons`), {
        status: 200,
        body: true,
      });
      assert.deepEqual(new Set(await publishedLayers(stack.qgis, file)), new Set(['lines', 'rgb', 'points']));
      for (const layer of ['lines', 'points', 'rgb']) {
        const response = await fetch(`${stack.api.url}/api/projects/${name}/layers/${layer}/map`);
        assert.equal(response.status, 200, layer);
        assert.ok(decodePng(Buffer.from(await response.arrayBuffer())).paintedPixels() > 0, layer);
      }
      const map = await ows(stack.qgis, file, {
        SERVICE: 'WMS',
        VERSION: '1.3.0',
        REQUEST: 'GetMap',
        LAYERS: 'rgb,lines',
        STYLES: ',',
        CRS: 'EPSG:4326',
        BBOX: '44,1,46,3',
        WIDTH: '40',
        HEIGHT: '40',
        FORMAT: 'image/png',
      });
      assert.deepEqual(decodePng(Buffer.from(await map.arrayBuffer())).pixel(2, 20), [200, 40, 90, 255]);
      assert.deepEqual(projectProblems(stack.qgis), []);
    });

    it('keeps the elements Steward does not own', () => {
      const text = projectText(file);
      assert.match(text, /<StewardTest>\s*<marker type="QString">kept<\/marker>/);
      assert.match(text, /<Bookmark [^>]*name="home"/);
      assert.match(text, /<title>made in QGIS<\/title>/);
      assert.match(text, /<layername>lines<\/layername>/);
      assert.doesNotMatch(text, /<layername>polygons<\/layername>/);
    });
  });
}
