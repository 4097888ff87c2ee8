/**
 * Data roots by content, attacked through the API with STEWARD_DATA_ROOTS set: datasets that make
 * GDAL read outside the roots (VRT, OGR VRT, driver prefixes), the one answer for a missing file
 * and one outside, a layer whose file is swapped for a link outside once added, and styles naming
 * outside images, remote SVG files or package "images" that are datasets.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { labelledPointQml, squareSvg, stylePackage } from './support/point-style.js';
import { type Stack, startStack } from './support/stack.js';

/** A 1 x 1 grey PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
  'base64',
);

function rasterVrt(source: string): string {
  return `<VRTDataset rasterXSize="4" rasterYSize="4">
  <SRS>EPSG:4326</SRS>
  <GeoTransform>2, 0.5, 0, 46, 0, -0.5</GeoTransform>
  <VRTRasterBand dataType="Byte" band="1">
    <SimpleSource><SourceFilename relativeToVRT="0">${source}</SourceFilename><SourceBand>1</SourceBand></SimpleSource>
  </VRTRasterBand>
</VRTDataset>`;
}

function vectorVrt(source: string): string {
  return `<OGRVRTDataSource><OGRVRTLayer name="stolen"><SrcDataSource>${source}</SrcDataSource><SrcLayer>points</SrcLayer></OGRVRTLayer></OGRVRTDataSource>`;
}

/** A point style drawing `file` with symbol layer `className`, which names it in `property`. */
function markerQml(className: string, property: string, file: string): string {
  return labelledPointQml(
    `<layer class="${className}" enabled="1" locked="0" pass="0">
     <Option type="Map"><Option type="QString" name="${property}" value="${file}"/><Option type="QString" name="size" value="5"/></Option>
     <prop k="${property}" v="${file}"/>
    </layer>`,
    'DejaVu Sans',
  );
}

const rasterMarkerQml = (image: string): string => markerQml('RasterMarker', 'imageFile', image);
const svgMarkerQml = (svg: string): string => markerQml('SvgMarker', 'name', svg);

describe('data roots by content', () => {
  let stack: Stack;
  let data: Fixtures;
  let outside: Fixtures;

  const qgsFile = (): string => join(stack.projectsDir, 'guarded', 'guarded.qgs');
  const addLayer = (body: object) => stack.call('POST', '/api/projects/guarded/layers', body);

  /** Adds a layer and expects `status`, leaving the project file as it was. */
  async function refused(body: { type: string; datasource: string }, status: number): Promise<string> {
    const before = readFileSync(qgsFile(), 'utf8');
    const reply = await addLayer({ name: 'attempt', ...body });
    assert.equal(reply.status, status, `${body.datasource}: ${JSON.stringify(reply.body)}`);
    assert.equal(readFileSync(qgsFile(), 'utf8'), before, 'the project is unchanged');
    return (reply.body as { error: string }).error;
  }

  async function putQml(style: string, qml: string): Promise<Response> {
    return fetch(`${stack.api.url}/api/projects/guarded/styles/${style}/qml`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml' },
      body: qml,
    });
  }

  before(async () => {
    data = makeFixtures();
    outside = makeFixtures();
    stack = await startStack({ dataRoots: [data.dir], styleRemoteHosts: ['tiles.example.org'] });
    assert.equal((await stack.call('POST', '/api/projects', { name: 'guarded', author: 'a' })).status, 201);
  });

  after(async () => {
    await stack.stop();
    rmSync(data.dir, { recursive: true, force: true });
    rmSync(outside.dir, { recursive: true, force: true });
  });

  it('refuses a raster VRT and an OGR VRT inside the roots that read files outside', async () => {
    const raster = join(data.dir, 'window.vrt');
    writeFileSync(raster, rasterVrt(outside.rgbTiff));
    const vector = join(data.dir, 'points.vrt');
    writeFileSync(vector, vectorVrt(outside.geopackage));
    const innocent = join(data.dir, 'innocent.tif');
    writeFileSync(innocent, rasterVrt(outside.rgbTiff));
    for (const [type, datasource] of [
      ['raster', raster],
      ['vector', vector],
      ['raster', innocent],
    ] as const) {
      assert.match(await refused({ type, datasource }, 403), /STEWARD_ALLOW_INDIRECT_DATASOURCES/);
    }
  });

  it('refuses driver prefixes, to files outside and inside alike', async () => {
    for (const datasource of ['CSV:/etc/passwd', `GPKG:${data.geopackage}:points`, `CSV:${join(data.dir, 'a.csv')}`]) {
      assert.match(await refused({ type: 'vector', datasource }, 403), /STEWARD_ALLOW_INDIRECT_DATASOURCES/);
    }
  });

  it('answers a missing file and one outside the roots alike', async () => {
    const missing = join(data.dir, 'nothing-here.tif');
    const answers = await Promise.all([
      refused({ type: 'raster', datasource: missing }, 403),
      refused({ type: 'raster', datasource: outside.rgbTiff }, 403),
      refused({ type: 'raster', datasource: '/etc/shadow' }, 403),
      refused({ type: 'raster', datasource: '/root/.ssh/id_rsa' }, 403),
    ]);
    const shapes = answers.map((answer) => answer.replace(/^\S+/, 'PATH'));
    assert.equal(new Set(shapes).size, 1, shapes.join('\n'));
  });

  it('refuses control characters in a datasource with 400', async () => {
    for (const datasource of [`${data.rgbTiff}\u0000.tif`, `${data.geopackage}\n|layername=points`]) {
      await refused({ type: 'raster', datasource }, 400);
    }
  });

  it('refuses to draw a layer whose file was swapped for a link outside once added', async () => {
    const file = join(data.dir, 'swapped.tif');
    copyFileSync(data.rgbTiff, file);
    assert.equal((await addLayer({ type: 'raster', name: 'swapped', datasource: file })).status, 201);
    assert.equal((await fetch(`${stack.api.url}/api/projects/guarded/layers/swapped/map`)).status, 200);
    unlinkSync(file);
    symlinkSync(outside.rgbTiff, file);
    const map = await fetch(`${stack.api.url}/api/projects/guarded/layers/swapped/map`);
    assert.equal(map.status, 403);
    const info = (await stack.call('GET', '/api/projects/guarded/layers/swapped')).body as { valid: boolean };
    assert.equal(info.valid, false);
  });

  it('refuses to draw, by every path of the API, a layer a project file names outside the roots', async () => {
    // As QGIS Desktop would write them, or as they stood before STEWARD_DATA_ROOTS was set.
    const insidePng = join(data.dir, 'drawn.png');
    const outsidePng = join(outside.dir, 'drawn.png');
    writeFileSync(insidePng, PNG);
    writeFileSync(outsidePng, PNG);
    const points = `${data.geopackage}|layername=points`;
    assert.equal((await addLayer({ type: 'vector', name: 'desk', datasource: points })).status, 201);
    assert.equal((await addLayer({ type: 'raster', name: 'desk-grid', datasource: data.rgbTiff })).status, 201);
    assert.equal((await putQml('drawn', rasterMarkerQml(insidePng))).status, 201);
    const applied = await stack.call('POST', '/api/projects/guarded/layers/desk/style', {
      name: 'drawn',
      current: true,
    });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    const paths = (layer: string): string[] => [
      `/api/projects/guarded/layers/${layer}/map`,
      `/api/projects/guarded/layers/${layer}/map?schema=public`,
      `/api/projects/guarded/layers/${layer}/legend`,
      `/api/projects/guarded/layers/${layer}/style.sld`,
      `/api/projects/guarded/wms?layers=desk-grid,${layer}&bbox=0,43,4,47&crs=EPSG:4326&width=64&height=64`,
    ];
    const statuses = async (layer: string): Promise<number[]> =>
      Promise.all(paths(layer).map(async (path) => (await fetch(stack.api.url + path)).status));
    assert.deepEqual(await statuses('desk'), [200, 200, 200, 200, 200]);
    const original = readFileSync(qgsFile(), 'utf8');
    try {
      writeFileSync(qgsFile(), original.replaceAll(insidePng, outsidePng));
      assert.deepEqual(await statuses('desk'), [403, 403, 403, 403, 403], 'a style image outside');
      writeFileSync(qgsFile(), original.replaceAll(insidePng, 'http://169.254.169.254/latest/marker.png'));
      assert.deepEqual(await statuses('desk'), [403, 403, 403, 403, 403], 'a style image on a host not allowed');
      writeFileSync(qgsFile(), original.replaceAll(data.geopackage, outside.geopackage));
      assert.deepEqual(await statuses('desk'), [403, 403, 403, 403, 403], 'a source outside');
      const map = await fetch(`${stack.api.url}/api/projects/guarded/layers/desk/map`);
      assert.match(((await map.json()) as { error: string }).error, /not a dataset inside the data folders/);
      // A VRT inside the roots that reads a raster outside, as a layer stored before the roots were set.
      writeFileSync(qgsFile(), original.replaceAll(data.rgbTiff, join(data.dir, 'window.vrt')));
      assert.deepEqual(await statuses('desk-grid'), [403, 403, 403, 403, 403], 'a VRT reading outside');
      const histogram = await stack.call('POST', '/api/processing/raster/histogram/guarded/desk-grid', {});
      assert.equal(histogram.status, 403, JSON.stringify(histogram.body));
    } finally {
      writeFileSync(qgsFile(), original);
    }
    assert.deepEqual(await statuses('desk'), [200, 200, 200, 200, 200]);
  });

  it('refuses a QML image outside the roots as it refuses a missing one, and keeps one inside', async () => {
    const outsidePng = join(outside.dir, 'secret.png');
    writeFileSync(outsidePng, PNG);
    const outsideAnswer = await putQml('outside', rasterMarkerQml(outsidePng));
    const missingAnswer = await putQml('missing', rasterMarkerQml(join(data.dir, 'nothing.png')));
    assert.equal(outsideAnswer.status, 422);
    assert.equal(missingAnswer.status, 422);
    const [outsideError, missingError] = await Promise.all(
      [outsideAnswer, missingAnswer].map(async (answer) => ((await answer.json()) as { error: string }).error),
    );
    assert.equal(
      outsideError?.replace(outsidePng, 'FILE'),
      missingError?.replace(join(data.dir, 'nothing.png'), 'FILE'),
    );
    const insidePng = join(data.dir, 'inside.png');
    writeFileSync(insidePng, PNG);
    assert.equal((await putQml('inside', rasterMarkerQml(insidePng))).status, 201);
    const styles = (await stack.call('GET', '/api/projects/guarded/styles')).body as string[];
    assert.ok(!styles.includes('outside') && !styles.includes('missing') && styles.includes('inside'));
  });

  it('refuses remote images and SVG files on hosts not allowed, which QGIS Server would fetch as it draws', async () => {
    const refused = [
      svgMarkerQml('http://169.254.169.254/latest/meta-data/marker.svg'),
      rasterMarkerQml('https://169.254.169.254/latest/marker.png'),
      rasterMarkerQml('http://tiles.example.org.attacker.test/marker.png'),
      rasterMarkerQml('http://tiles.example.org:8080/marker.png'),
    ];
    for (const [n, qml] of refused.entries()) {
      const reply = await putQml(`remote-${n}`, qml);
      assert.equal(reply.status, 403, qml);
      assert.match(((await reply.json()) as { error: string }).error, /STEWARD_STYLE_REMOTE_HOSTS/);
    }
    assert.equal((await putQml('allowed', rasterMarkerQml('https://tiles.example.org/marker.png'))).status, 201);
    const styles = (await stack.call('GET', '/api/projects/guarded/styles')).body as string[];
    assert.ok(styles.includes('allowed') && !styles.some((style) => style.startsWith('remote-')));
  });

  it('refuses a style package whose "image" is a VRT, storing nothing', async () => {
    const zip = stylePackage({
      'style.qml': rasterMarkerQml('images/marker.vrt'),
      'images/marker.vrt': rasterVrt(outside.rgbTiff),
      'images/square.svg': squareSvg([1, 2, 3]),
    });
    const reply = await fetch(`${stack.api.url}/api/projects/guarded/styles/smuggled/package`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: new Uint8Array(zip),
    });
    assert.equal(reply.status, 422);
    assert.match(((await reply.json()) as { error: string }).error, /marker\.vrt/);
    assert.ok(!existsSync(join(stack.projectsDir, 'guarded', 'styles', 'smuggled')));
  });
});
