/**
 * `POST .../layers/{layer}/style-preview` against a real QGIS Server with Steward's plugin: a JSON
 * style that is not stored draws the view as QGIS Server's WMS draws the same style once stored
 * (categorized points, a pseudocolor raster), and neither a preview nor a refused one writes a
 * byte of the projects folder.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { agree, distinctColours } from './support/drawings.js';
import { settledFileBytes } from './support/file-tree.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { byName, RELIEF } from './support/json-styles.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { type Stack, startStack } from './support/stack.js';
import { type CorpusSources, corpusSources } from './support/style-corpus.js';
import { waitFor } from './support/wait.js';

const PROJECT = '/api/projects/drafts';
const SIZE = 256;

const BY_NAME = byName('by-name');

interface Answer {
  status: number;
  type: string;
  bytes: Buffer;
}

describe('style previews: a JSON style drawn by QGIS Server without being stored', () => {
  let stack: Stack;
  let data: Fixtures;
  let sources: CorpusSources;

  /** The view of one layer over a square about its extent (square pixels, as a map client asks), as the map routes take it. */
  const viewOf = async (layer: string, styles = ''): Promise<URLSearchParams> => {
    const info = (await stack.call('GET', `${PROJECT}/layers/${layer}`)).body as { bbox: string; crs: string };
    const [xmin = 0, ymin = 0, xmax = 0, ymax = 0] = info.bbox.split(/[ ,]+/).map(Number);
    const half = Math.max(xmax - xmin, ymax - ymin) / 2;
    const [cx, cy] = [(xmin + xmax) / 2, (ymin + ymax) / 2];
    const bbox = [cx - half, cy - half, cx + half, cy + half].join(',');
    const size = String(SIZE);
    return new URLSearchParams({ layers: layer, styles, bbox, crs: info.crs, width: size, height: size });
  };

  const preview = async (layer: string, body: unknown, view?: URLSearchParams): Promise<Answer> => {
    const query = view ?? (await viewOf(layer));
    const response = await fetch(`${stack.api.url}${PROJECT}/layers/${layer}/style-preview?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const type = response.headers.get('content-type') ?? '';
    return { status: response.status, type, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  /** QGIS Server's WMS of the view (`GET .../wms`). */
  const served = async (view: URLSearchParams): Promise<Image> => {
    const response = await fetch(`${stack.api.url}${PROJECT}/wms?${view}`);
    assert.equal(response.status, 200);
    return decodePng(Buffer.from(await response.arrayBuffer()));
  };

  /** Every file of the projects folder with its bytes (the audit log aside, which records the test's own writes). */
  const projectFiles = (): Promise<Map<string, string>> =>
    settledFileBytes(stack.projectsDir, [join(stack.projectsDir, '.access')]);

  const assertUnchanged = async (before: Map<string, string>): Promise<void> =>
    assert.deepEqual(await projectFiles(), before, 'every file of the projects folder is byte-identical');

  /** Previews the style, then stores it in the layer (not current) and compares with QGIS Server's WMS of it. */
  async function assertDrawnAsStored(layer: string, style: { name: string }, colours: string[]): Promise<void> {
    const before = await projectFiles();
    const drawn = await preview(layer, style);
    assert.equal(drawn.status, 200, drawn.bytes.toString('utf8'));
    assert.equal(drawn.type, 'image/png');
    await assertUnchanged(before);
    const stored = await stack.call('PUT', `${PROJECT}/styles/${style.name}?layer=${layer}`, style);
    assert.equal(stored.status, 201, JSON.stringify(stored.body));
    const image = decodePng(drawn.bytes);
    const wms = await served(await viewOf(layer, style.name));
    assert.ok(wms.paintedPixels() > 0, 'QGIS Server drew something');
    const { ok, differing } = agree(image, wms);
    assert.ok(ok, `${differing} of ${wms.paintedPixels()} painted pixels differ from QGIS Server's WMS`);
    const coloursDrawn = distinctColours(image);
    for (const colour of colours) assert.ok(coloursDrawn.has(colour), `${colour} is drawn`);
  }

  before(async () => {
    data = makeFixtures();
    sources = corpusSources(data);
    stack = await startStack();
    await stack.call('POST', '/api/projects', { name: 'drafts', author: 'test' });
    for (const [name, type] of [
      ['points', 'vector'],
      ['dem', 'raster'],
    ] as const) {
      const reply = await stack.call('POST', `${PROJECT}/layers`, { type, name, datasource: sources[name] });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
    }
  });
  after(async () => {
    await stack.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('draws a categorized style not stored as QGIS Server draws it once stored', async () => {
    await assertDrawnAsStored('points', BY_NAME, ['255,0,0', '0,0,255', '0,255,0']);
  });

  it('draws a pseudocolor style not stored as QGIS Server draws it once stored', async () => {
    await assertDrawnAsStored('dem', RELIEF, ['0,0,128', '0,192,0', '255,128,0']);
  });

  it('draws the other layers of the view as they are, under the layer previewed', async () => {
    const purple = {
      ...BY_NAME,
      name: 'purple',
      symbology: {
        ...BY_NAME.symbology,
        categories: BY_NAME.symbology.categories.map((category) => ({ ...category, colour: '#800080' })),
      },
    };
    const view = await viewOf('points');
    view.set('layers', 'dem,points');
    view.set('styles', 'relief,');
    const drawn = await preview('points', purple, view);
    assert.equal(drawn.status, 200, drawn.bytes.toString('utf8'));
    assert.equal((await stack.call('PUT', `${PROJECT}/styles/purple?layer=points`, purple)).status, 201);
    view.set('styles', 'relief,purple');
    const wms = await served(view);
    const image = decodePng(drawn.bytes);
    const { ok, differing } = agree(image, wms);
    assert.ok(ok, `${differing} of ${wms.paintedPixels()} painted pixels differ from QGIS Server's WMS`);
    assert.ok(distinctColours(image).has('128,0,128'), 'the points are purple');
  });

  it('refuses what it cannot draw with a clear error, writing nothing', async () => {
    const before = await projectFiles();
    const unknownLayer = await viewOf('points');
    unknownLayer.set('layers', 'nowhere');
    const unknownCrs = await viewOf('points');
    unknownCrs.set('crs', 'EPSG:999999');
    const refusals: Array<[string, unknown, URLSearchParams | undefined, number, string, RegExp]> = [
      ['points', BY_NAME, await viewOf('dem'), 400, 'bad_request', /layers must name the layer previewed/],
      ['points', RELIEF, undefined, 422, 'unprocessable', /is a vector layer: it cannot draw a raster style/],
      [
        'points',
        { ...BY_NAME, symbology: { ...BY_NAME.symbology, field: 'nowhere' } },
        undefined,
        422,
        'unprocessable',
        /has no field "nowhere"/,
      ],
      ['points', { type: 'vector' }, undefined, 400, 'bad_request', /./],
      ['nowhere', BY_NAME, unknownLayer, 404, 'layer_not_found', /has no layer "nowhere"/],
      ['points', BY_NAME, unknownCrs, 400, 'bad_request', /CRS 'EPSG:999999' is not a CRS QGIS knows/],
    ];
    for (const [layer, body, view, status, code, message] of refusals) {
      const answer = await preview(layer, body, view);
      const refusal = JSON.parse(answer.bytes.toString('utf8')) as { error: string; code: string };
      assert.deepEqual([answer.status, refusal.code], [status, code], refusal.error);
      assert.match(refusal.error, message);
    }
    await assertUnchanged(before);
  });

  it('leaves the previews out of the audit log, which keeps the writes beside them', async () => {
    const entries = await waitFor('the style writes in the audit log', async () => {
      const log = (await stack.call('GET', '/api/audit?limit=1000')).body as Array<{ method: string; path: string }>;
      return log.some((entry) => entry.path.endsWith('/styles/purple')) && log;
    });
    assert.deepEqual(
      entries.filter((entry) => entry.path.includes('style-preview')),
      [],
    );
  });
});
