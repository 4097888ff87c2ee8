import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { agree, distinctColours, SERVER_DPI } from './support/drawings.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { byName, MARKER, RELIEF } from './support/json-styles.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { type Stack, startStack } from './support/stack.js';
import { type CorpusSources, corpusSources, type RenderJob, renderWithQgis } from './support/style-corpus.js';
import { pyqgis } from './support/style-oracle.js';
import { selectedStorage } from './support/test-storage.js';

const BY_FID = {
  type: 'vector',
  name: 'by-fid',
  symbology: {
    type: 'graduated',
    symbol: 'marker',
    properties: MARKER,
    field: 'fid',
    ranges: [
      { lower: 0.5, upper: 1.5, label: 'one', colour: '#FFFF00' },
      { lower: 1.5, upper: 3.5, label: 'two and three', colour: '#FF00FF' },
    ],
  },
};

describe(`categorized, graduated and pseudocolor JSON styles drawn as PyQGIS draws them (${selectedStorage()} storage)`, () => {
  let stack: Stack;
  let data: Fixtures;
  let sources: CorpusSources;
  let scratch: string;
  const project = '/api/projects/classed';
  const put = (style: string, body: unknown, query = ''): Promise<{ status: number; body: unknown }> =>
    stack.call('PUT', `${project}/styles/${style}${query}`, body);

  /** QGIS Server's map of the layer, and PyQGIS's drawing of the style's QML over the same extent. */
  async function drawings(layer: 'points' | 'dem', style: string): Promise<{ server: Image; qgis: Image }> {
    const response = await fetch(`${stack.api.url}${project}/layers/${layer}/map`);
    assert.equal(response.status, 200);
    const server = decodePng(Buffer.from(await response.arrayBuffer()));
    const { url } = (await stack.call('GET', `${project}/layers/${layer}/map/url`)).body as { url: string };
    const query = new URL(url).searchParams;
    const { bbox } = (await stack.call('GET', `${project}/layers/${layer}`)).body as { bbox: string };
    const qml = join(scratch, `${style}.qml`);
    writeFileSync(qml, await (await fetch(`${stack.api.url}${project}/styles/${style}/qml?layer=${layer}`)).text());
    const job: RenderJob = {
      kind: layer === 'dem' ? 'raster' : 'vector',
      source: sources[layer],
      qml,
      crs: query.get('CRS') ?? '',
      extent: bbox.split(/[ ,]+/).map(Number) as RenderJob['extent'],
      size: Number(query.get('WIDTH')),
      dpi: SERVER_DPI,
      out: join(scratch, `${style}.qgis.png`),
    };
    const [rendered] = renderWithQgis([job], scratch);
    assert.equal(rendered?.ok, true, rendered?.message);
    return { server, qgis: decodePng(readFileSync(job.out)) };
  }

  function assertAgree({ server, qgis }: { server: Image; qgis: Image }, colours: string[]): void {
    assert.ok(qgis.paintedPixels() > 0, 'QGIS drew something');
    const { ok, differing } = agree(server, qgis);
    assert.ok(ok, `${differing} of ${qgis.paintedPixels()} painted pixels differ`);
    const drawn = distinctColours(server);
    for (const colour of colours) assert.ok(drawn.has(colour), `${colour} is drawn (${[...drawn].join(' ')})`);
  }

  before(async () => {
    data = makeFixtures();
    sources = corpusSources(data);
    scratch = mkdtempSync(join(tmpdir(), 'steward-renderers-'));
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'classed', author: 'test' });
    for (const [name, type] of [
      ['points', 'vector'],
      ['dem', 'raster'],
    ] as const) {
      const reply = await stack.call('POST', `${project}/layers`, { type, name, datasource: sources[name] });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
    }
  });
  after(async () => {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('draws a categorized style put in a layer in one request, each category and the others in its colour', async () => {
    assert.equal((await put('by-name', byName('by-name'), '?layer=points&current=true')).status, 201);
    const layer = (await stack.call('GET', `${project}/layers/points`)).body as { current_style: string };
    assert.equal(layer.current_style, 'by-name');
    assertAgree(await drawings('points', 'by-name'), ['255,0,0', '0,0,255', '0,255,0']);
  });

  it('draws a graduated style in the colour of each range', async () => {
    assert.equal((await put('by-fid', BY_FID, '?layer=points&current=true')).status, 201);
    assertAgree(await drawings('points', 'by-fid'), ['255,255,0', '255,0,255']);
  });

  it('draws a singleband pseudocolor style in its classes', async () => {
    assert.equal((await put('relief', RELIEF, '?layer=dem&current=true')).status, 201);
    assertAgree(await drawings('dem', 'relief'), ['0,0,128', '0,192,0', '255,128,0']);
  });

  it('describes a categorized QML that QGIS wrote as JSON, which draws the same once put back', async () => {
    const desktop = join(scratch, 'desktop.qml');
    const [written] = await pyqgis([
      {
        op: 'reference_classes',
        layer: { kind: 'vector', source: sources.points },
        renderer: 'categorized',
        symbol: 'marker',
        field: 'name',
        properties: { size: '4', outline_style: 'no' },
        classes: [
          { value: 'points-2', label: 'last', colour: '255,128,0,255' },
          { value: '', label: 'the rest', colour: '128,0,128,255' },
        ],
        opacity: 1,
        save: desktop,
      },
    ]);
    assert.equal(written?.ok, true, written?.message);
    const upload = await fetch(`${stack.api.url}${project}/styles/desktop/qml`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml' },
      body: readFileSync(desktop, 'utf8'),
    });
    assert.equal(upload.status, 201);
    assert.equal(
      (await stack.call('POST', `${project}/layers/points/style`, { name: 'desktop', current: true })).status,
      200,
    );
    const before = await drawings('points', 'desktop');
    assertAgree(before, ['255,128,0', '128,0,128']);
    const shape = await fetch(`${stack.api.url}${project}/styles/desktop`);
    assert.match(shape.headers.get('content-type') ?? '', /^application\/xml/, 'without as=json, the QML as it was');
    const described = await stack.call('GET', `${project}/styles/desktop?as=json`);
    assert.equal(described.status, 200, JSON.stringify(described.body));
    const style = described.body as { symbology: Record<string, unknown> };
    assert.equal(style.symbology['type'], 'categorized');
    assert.equal(style.symbology['field'], 'name');
    assert.deepEqual(style.symbology['categories'], [{ value: 'points-2', label: 'last', colour: '#FF8000' }]);
    assert.deepEqual(style.symbology['other'], { label: 'the rest', colour: '#800080' });
    assert.equal((await put('desktop', described.body)).status, 200);
    const after = await drawings('points', 'desktop');
    assert.ok(agree(after.server, before.server).ok, 'the JSON draws as the QML QGIS wrote');
  });

  it('says why a style cannot be described as JSON', async () => {
    const qml = readFileSync(join(scratch, 'desktop.qml'), 'utf8').replace('<qgis ', '<qgis labelsEnabled="1" ');
    const upload = await fetch(`${stack.api.url}${project}/styles/labelled/qml`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml' },
      body: qml,
    });
    assert.equal(upload.status, 201);
    const reply = await stack.call('GET', `${project}/styles/labelled?as=json`);
    assert.equal(reply.status, 422);
    assert.match((reply.body as { error: string }).error, /cannot be described as a JSON style: it has labels/);
  });

  describe('bad input changes nothing', () => {
    const cases: Array<[string, () => Promise<{ status: number; body: unknown }>, number, RegExp]> = [
      [
        'a replacement classing by a field a layer lacks',
        () => put('by-name', byName('by-name', 'colour')),
        422,
        /layer "points" has no field "colour", by which style "by-name" classes its features \(its fields: fid, name\)/,
      ],
      [
        'a new style put in a layer that lacks its field',
        () => put('loose', byName('loose', 'nope'), '?layer=points'),
        422,
        /layer "points" has no field "nope"/,
      ],
      [
        'a colour that is not one',
        () =>
          put('by-fid', {
            ...BY_FID,
            symbology: { ...BY_FID.symbology, ranges: [{ lower: 1, upper: 3, colour: 'yellow' }] },
          }),
        400,
        /"yellow" is not a colour for symbology\.ranges\.0\.colour/,
      ],
      [
        'an opacity above 1',
        () => put('by-name', { ...(byName('by-name') as object), rendering: { opacity: 2 } }),
        400,
        /rendering\.opacity/,
      ],
      [
        'a range whose bounds are the wrong way round',
        () =>
          put('by-fid', {
            ...BY_FID,
            symbology: { ...BY_FID.symbology, ranges: [{ lower: 3, upper: 1, colour: '#FFFF00' }] },
          }),
        400,
        /lower bound 3 above its upper bound 1/,
      ],
      [
        'colour stops that do not rise',
        () =>
          put('relief', {
            ...RELIEF,
            symbology: {
              type: 'singlebandpseudocolor',
              properties: { ...RELIEF.symbology.properties, stops: [...RELIEF.symbology.properties.stops].reverse() },
            },
          }),
        400,
        /colour stops must rise/,
      ],
      [
        'a band the raster lacks',
        () =>
          put('relief', {
            ...RELIEF,
            symbology: { type: 'singlebandpseudocolor', properties: { ...RELIEF.symbology.properties, band: 2 } },
          }),
        422,
        /style "relief" reads band 2, which layer "dem" does not have \(it has 1\)/,
      ],
    ];
    for (const [situation, request, status, message] of cases) {
      it(`answers ${status} to ${situation}`, async () => {
        const project = await stack.storage.projectXml('classed');
        const styles = (await stack.call('GET', '/api/projects/classed/styles')).body as string[];
        const stored = await Promise.all(styles.map((style) => stack.storage.styleQml('classed', style)));
        const reply = await request();
        assert.equal(reply.status, status, JSON.stringify(reply.body));
        assert.match((reply.body as { error: string }).error, message);
        assert.equal(await stack.storage.projectXml('classed'), project);
        assert.deepEqual((await stack.call('GET', '/api/projects/classed/styles')).body, styles);
        assert.deepEqual(await Promise.all(styles.map((style) => stack.storage.styleQml('classed', style))), stored);
      });
    }
  });

  it('refuses to give a layer a style classing by a field it lacks', async () => {
    assert.equal((await stack.call('POST', `${project}/styles`, byName('unattached', 'nope'))).status, 201);
    const reply = await stack.call('POST', `${project}/layers/points/style`, { name: 'unattached', current: true });
    assert.equal(reply.status, 422);
    assert.match((reply.body as { error: string }).error, /layer "points" has no field "nope"/);
  });
});
