import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { zipSync } from 'fflate';

import { agree, distinctColours, SERVER_DPI } from './support/drawings.js';
import { settledFileBytes } from './support/file-tree.js';
import { categorizedFillQml } from './support/fill-qml.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { squareSvg, stylePackage, svgMarkerQml } from './support/point-style.js';
import { type Stack, startStack } from './support/stack.js';
import {
  type CorpusSources,
  corpusSources,
  type CorpusStyle,
  readSldWithQgis,
  type RenderJob,
  renderWithQgis,
  type SaveSldJob,
  saveSldWithQgis,
  writeCorpus,
  writeLayerLevelStyles,
} from './support/style-corpus.js';
import { xmlDifference } from './support/style-oracle.js';
import { selectedStorage } from './support/test-storage.js';
import { waitFor } from './support/wait.js';
import { fillStyle, grayStretch } from './support/write-bodies.js';

const STYLE_BODY_LIMIT = 4 * 1024 * 1024;
/** Renderers SLD has no form for. */
const WITHOUT_SLD = ['heatmap', 'inverted-polygons', 'two-and-half-d'];
/** The colour a QML given to the polygons fills their one feature with. */
const BY_NAME_COLOUR = [0, 128, 255];

interface Version {
  id: string;
  route: string;
  summary: string;
}

/** Inverted polygons paint outside the polygons, so they are compared over twice the layer's extent. */
const WIDENED = new Set(['inverted-polygons']);

function widen([xmin, ymin, xmax, ymax]: number[]): [number, number, number, number] {
  const [dx, dy] = [((xmax ?? 0) - (xmin ?? 0)) / 2, ((ymax ?? 0) - (ymin ?? 0)) / 2];
  return [(xmin ?? 0) - dx, (ymin ?? 0) - dy, (xmax ?? 0) + dx, (ymax ?? 0) + dy];
}

describe(`styles made in QGIS Desktop: QML in and out, drawn as QGIS draws them (${selectedStorage()} storage)`, () => {
  let stack: Stack;
  let data: Fixtures;
  let sources: CorpusSources;
  let corpus: CorpusStyle[];
  let scratch: string;
  const project = '/api/projects/desk';
  const qml = (style: string): string => readFileSync(join(scratch, `${style}.qml`), 'utf8');
  const put = async (style: string, body: string, type = 'application/xml'): Promise<Response> =>
    fetch(`${stack.api.url}${project}/styles/${style}/qml`, {
      method: 'PUT',
      headers: { 'content-type': type },
      body,
    });
  /** A style that draws with files of its own goes up as a package: its QML and those files, zipped. */
  const upload = async ({ style, package: files }: CorpusStyle): Promise<number> => {
    if (files.length === 0) return (await put(style, qml(style))).status;
    const entries = Object.fromEntries(
      [`${style}.qml`, ...files].map((file) => [file, readFileSync(join(scratch, file))]),
    );
    const response = await fetch(`${stack.api.url}${project}/styles/${style}/package`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: zipSync(entries),
    });
    const answer = (await response.json()) as { images?: string[] };
    assert.deepEqual(answer.images, files, `${style}: the package's files are kept`);
    return response.status;
  };
  const map = async (layer: string): Promise<Buffer> => {
    const response = await fetch(`${stack.api.url}${project}/layers/${layer}/map`);
    assert.equal(response.status, 200);
    return Buffer.from(await response.arrayBuffer());
  };
  /** The layer's extent as Steward reports it (`xmin ymin, xmax ymax`, east first). */
  const layerExtent = async (layer: string): Promise<[number, number, number, number]> => {
    const { bbox } = (await stack.call('GET', `${project}/layers/${layer}`)).body as { bbox: string };
    const [xmin, ymin, xmax, ymax] = bbox.split(/[ ,]+/).map(Number) as [number, number, number, number];
    return [xmin, ymin, xmax, ymax];
  };
  const apply = async (layer: string, name: string): Promise<void> => {
    const reply = await stack.call('POST', `${project}/layers/${layer}/style`, { name, current: true });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  };

  before(async () => {
    data = makeFixtures();
    sources = corpusSources(data);
    scratch = mkdtempSync(join(tmpdir(), 'steward-corpus-'));
    corpus = writeCorpus(sources, scratch);
    stack = await startStack({ styleBodyLimit: STYLE_BODY_LIMIT });
    await stack.call('POST', '/api/projects/', { name: 'desk', author: 'test' });
    for (const [name, kind] of [
      ['points', 'vector'],
      ['lines', 'vector'],
      ['polygons', 'vector'],
      ['rgb', 'raster'],
      ['dem', 'raster'],
      ['classes', 'raster'],
    ] as const) {
      const reply = await stack.call('POST', `${project}/layers`, { type: kind, name, datasource: sources[name] });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
    }
  });
  after(async () => {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('takes a QML as QGIS wrote it: 201 when new, 200 when replaced, and gives it back as it was', async () => {
    assert.ok(corpus.length >= 21, `QGIS wrote ${corpus.length} styles`);
    assert.equal((await put('categorized', qml('categorized'))).status, 201);
    assert.equal((await put('categorized', qml('categorized'), 'text/xml; charset=utf-8')).status, 200);
    const back = await fetch(`${stack.api.url}${project}/styles/categorized/qml`);
    assert.equal(back.status, 200);
    assert.match(back.headers.get('content-type') ?? '', /^application\/xml/);
    assert.equal(await back.text(), qml('categorized'));
    const shape = await fetch(`${stack.api.url}${project}/styles/categorized`);
    assert.equal(await shape.text(), qml('categorized'), 'a QML style is described in the shape that made it');
    assert.deepEqual((await stack.call('GET', `${project}/styles`)).body, ['categorized']);
  });

  it('describes a JSON style as QML too, and keeps its JSON shape', async () => {
    assert.equal((await stack.call('POST', `${project}/styles`, fillStyle('teal', '#00BBBB'))).status, 201);
    const back = await fetch(`${stack.api.url}${project}/styles/teal/qml`);
    assert.equal(back.status, 200);
    const text = await back.text();
    assert.match(text, /<qgis [^>]*>/);
    assert.match(text, /<renderer-v2 [^>]*type="singleSymbol"/);
    const json = (await stack.call('GET', `${project}/styles/teal`)).body as { type: string; name: string };
    assert.equal(json.type, 'vector');
    assert.equal(json.name, 'teal');
  });

  it('refuses other content types (415), documents that are not QGIS styles (400) and bodies over the limit (413)', async () => {
    const reasons: Array<[string, string, number, RegExp]> = [
      ['json', JSON.stringify({ type: 'vector' }), 415, /application\/xml/],
      ['text', 'hello', 415, /application\/xml/],
    ];
    for (const [type, body, status, message] of reasons) {
      const response = await put('x', body, type === 'json' ? 'application/json' : 'text/plain');
      assert.equal(response.status, status);
      assert.match(((await response.json()) as { error: string }).error, message);
    }
    const bad: Array<[string, RegExp]> = [
      ['<qgis><renderer-v2 type="singleSymbol">', /not well-formed/],
      ['<StyledLayerDescriptor/>', /root element is <StyledLayerDescriptor>, not <qgis> \(an SLD document: PUT/],
      ['<qgis version="3.22"><flags/></qgis>', /neither a vector renderer/],
      ['<qgis><renderer-v2 type="sparkles"/></qgis>', /renderer-v2 type "sparkles"/],
      ['<qgis><pipe><rasterrenderer type="glitter"/></pipe></qgis>', /rasterrenderer type "glitter"/],
    ];
    for (const [body, message] of bad) {
      const response = await put('x', body);
      assert.equal(response.status, 400, body);
      assert.match(((await response.json()) as { error: string }).error, message);
    }
    const padding = `<!-- ${'x'.repeat(2 * 1024 * 1024)} -->`;
    const large = qml('single-symbol').replace('<qgis ', `${padding}\n<qgis `);
    assert.equal((await put('large', large)).status, 201, 'a 2 MiB style fits the style limit');
    const tooLarge = qml('single-symbol').replace('<qgis ', `${padding}${padding}${padding}\n<qgis `);
    const refused = await put('huge', tooLarge);
    assert.equal(refused.status, 413);
    assert.equal(typeof ((await refused.json()) as { error: unknown }).error, 'string');
    const json = fillStyle('big', '#000000');
    const bigJson = await stack.call('POST', `${project}/styles`, { ...json, padding });
    assert.equal(bigJson.status, 413, 'the 1 MiB limit stays on the other routes');
    assert.deepEqual((await stack.call('GET', `${project}/styles`)).body, ['categorized', 'large', 'teal']);
    assert.equal((await stack.call('DELETE', `${project}/styles/large`)).status, 200);
  });

  it('answers 422 for a style that a layer using it cannot draw, and changes nothing', async () => {
    await apply('points', 'categorized');
    const project = await stack.storage.projectXml('desk');
    const response = await put('categorized', qml('hillshade'));
    assert.equal(response.status, 422);
    assert.match(((await response.json()) as { error: string }).error, /raster style and the layer is vector/);
    assert.equal(await stack.storage.projectXml('desk'), project);
    assert.equal(await stack.storage.styleQml('desk', 'categorized'), qml('categorized'));
  });

  it('switches a layer back to its default style', async () => {
    const styled = decodePng(await map('points'));
    assert.ok(distinctColours(styled).has('255,0,0'), 'the categorized style draws the red category');
    await apply('points', 'default');
    const info = (await stack.call('GET', `${project}/layers/points`)).body as { current_style: string };
    assert.equal(info.current_style, 'default');
    const colours = distinctColours(decodePng(await map('points')));
    assert.ok(colours.has('232,113,141'), `QGIS's default marker colour is drawn (${[...colours].join(' ')})`);
    assert.ok(!colours.has('255,0,0'));
    await apply('points', 'categorized');
    assert.ok(distinctColours(decodePng(await map('points'))).has('255,0,0'));
  });

  it('draws every renderer QGIS wrote as QGIS itself draws it', async () => {
    const jobs: Array<RenderJob & { style: string }> = [];
    const served = new Map<string, Buffer>();
    for (const entry of corpus) {
      const { style, layer, kind } = entry;
      const status = await upload(entry);
      assert.ok(status === 201 || status === 200, `${style}: ${status}`);
      await apply(layer, style);
      const { url } = (await stack.call('GET', `${project}/layers/${layer}/map/url`)).body as { url: string };
      const getMap = new URL(url);
      const query = getMap.searchParams;
      const crs = query.get('CRS') ?? '';
      let box = (query.get('BBOX') ?? '').split(',').map(Number) as [number, number, number, number];
      if (WIDENED.has(style)) {
        box = widen(box);
        query.set('BBOX', box.join(','));
        served.set(style, Buffer.from(await (await fetch(getMap)).arrayBuffer()));
      } else {
        served.set(style, await map(layer));
      }
      // QGIS is given the layer's own extent, as Desktop's "Zoom to Layer" is: it widens the extent
      // to the image's square, as Steward's map must (the DEM is wider than tall, the classes taller).
      const extent: RenderJob['extent'] = WIDENED.has(style)
        ? crs === 'EPSG:4326'
          ? [box[1], box[0], box[3], box[2]]
          : box
        : await layerExtent(layer);
      jobs.push({
        style,
        kind,
        source: sources[layer],
        qml: join(scratch, `${style}.qml`),
        crs,
        extent,
        size: Number(query.get('WIDTH')),
        dpi: SERVER_DPI,
        out: join(scratch, `${style}.qgis.png`),
      });
    }
    renderWithQgis(jobs, scratch);
    const failures: string[] = [];
    const previous = new Map<string, Image>();
    const drawn = new Map<string, Image>();
    for (const job of jobs) {
      const server = decodePng(served.get(job.style) ?? Buffer.alloc(0));
      const qgis = decodePng(readFileSync(job.out));
      drawn.set(job.style, server);
      if (qgis.paintedPixels() === 0) failures.push(`${job.style}: QGIS drew nothing`);
      const { ok, differing } = agree(server, qgis);
      if (!ok) failures.push(`${job.style}: ${differing} of ${qgis.paintedPixels()} painted pixels differ`);
      // The pixels are the style's own: QGIS's drawing of the layer's previous style does not agree.
      const before = previous.get(job.source);
      if (before && agree(server, before).ok) failures.push(`${job.style} draws as the style before it`);
      if (!WIDENED.has(job.style)) previous.set(job.source, qgis);
    }
    assert.deepEqual(failures, []);
    const labels = distinctColours(drawn.get('simple-labels') as Image);
    assert.ok(labels.has('192,0,0'), 'the labels are drawn in their colour');
    const pies = distinctColours(drawn.get('diagrams') as Image);
    assert.ok(pies.has('255,0,0') && pies.has('0,0,255'), 'the pie diagram is drawn with its two colours');
    const stars = distinctColours(drawn.get('svg-marker-package') as Image);
    assert.ok(stars.has('255,140,0'), 'the package\'s SVG is drawn in its colour, not QGIS\'s "?"');
  });

  it('draws a layer whose extent is not square in a square around it, not stretched', async () => {
    for (const [layer, wider] of [
      ['dem', true],
      ['classes', false],
    ] as const) {
      const [xmin, ymin, xmax, ymax] = await layerExtent(layer);
      assert.equal(xmax - xmin > ymax - ymin, wider, `${layer}'s extent is not square`);
      const { url } = (await stack.call('GET', `${project}/layers/${layer}/map/url`)).body as { url: string };
      const query = new URL(url).searchParams;
      assert.equal(query.get('WIDTH'), '400');
      assert.equal(query.get('HEIGHT'), '400');
      const [bx0, by0, bx1, by1] = (query.get('BBOX') ?? '').split(',').map(Number) as [number, number, number, number];
      assert.ok(
        Math.abs(bx1 - bx0 - (by1 - by0)) < 1e-6,
        `${layer}: the GetMap's box is square (${bx0},${by0},${bx1},${by1})`,
      );
      assert.ok(bx0 <= xmin && by0 <= ymin && bx1 >= xmax && by1 >= ymax, `${layer}: the box holds the extent`);
      assert.ok(Math.abs((bx0 + bx1) / 2 - (xmin + xmax) / 2) < 1e-6, `${layer}: the box is centred on it`);
      assert.ok(Math.abs((by0 + by1) / 2 - (ymin + ymax) / 2) < 1e-6, `${layer}: the box is centred on it`);
    }
  });

  it("gives the current style alone as the SLD QGIS Desktop's Save as SLD writes, which QGIS reads as Desktop's", async () => {
    // Every corpus style was uploaded by the test before; each vector layer has several styles.
    const vector = corpus.filter((entry) => entry.kind === 'vector');
    const exports: SaveSldJob[] = [];
    const renders: RenderJob[] = [];
    for (const { style, layer } of vector) {
      await apply(layer, style);
      const response = await fetch(`${stack.api.url}${project}/layers/${layer}/style.sld`);
      assert.equal(response.status, 200, style);
      assert.equal(response.headers.get('content-type'), 'application/vnd.ogc.sld+xml');
      const steward = join(scratch, `${style}.steward.sld`);
      writeFileSync(steward, await response.text());
      const desktop = join(scratch, `${style}.desktop.sld`);
      exports.push({
        kind: 'vector',
        source: sources[layer],
        name: layer,
        qml: join(scratch, `${style}.qml`),
        out: desktop,
      });
      const { crs } = (await stack.call('GET', `${project}/layers/${layer}`)).body as { crs: string };
      const job = { kind: 'vector' as const, source: sources[layer], qml: '', crs, size: 400, dpi: SERVER_DPI };
      const extent = await layerExtent(layer);
      renders.push({ ...job, extent, sld: steward, out: join(scratch, `${style}.steward-sld.png`) });
      renders.push({ ...job, extent, sld: desktop, out: join(scratch, `${style}.desktop-sld.png`) });
    }
    const saved = saveSldWithQgis(exports, scratch);
    // From 3.44 on, Desktop refuses to save renderers SLD has no form for (earlier releases write a
    // comment in their place); Steward still gives QGIS Server's document for them.
    const refused = vector.filter((_, index) => !saved[index]?.ok).map(({ style }) => style);
    assert.ok(
      refused.every((style) => WITHOUT_SLD.includes(style)),
      JSON.stringify(saved),
    );
    const failures: string[] = [];
    for (const { style } of vector) {
      if (refused.includes(style)) continue;
      const steward = readFileSync(join(scratch, `${style}.steward.sld`), 'utf8');
      // Desktop names the images as the QML it loaded does; Steward as the project keeps them.
      const withoutImages = (sld: string): string => sld.replace(/xlink:href="[^"]*"/g, 'xlink:href=""');
      const desktop = readFileSync(join(scratch, `${style}.desktop.sld`), 'utf8');
      const difference = xmlDifference(withoutImages(steward), withoutImages(desktop));
      if (difference) failures.push(`${style}: the SLD differs from Desktop's at ${difference}`);
      assert.equal((steward.match(/<UserStyle>/g) ?? []).length, 1, `${style}: one user style`);
    }
    assert.deepEqual(failures, []);
    // The documents are Desktop's, so QGIS reads each as it reads Desktop's (labels from an SLD are
    // placed anew on each drawing, so their pixels are compared with the layer's map only below).
    const read = renderWithQgis(renders, scratch);
    for (const [index, job] of renders.entries()) {
      if (index % 2 === 1 || refused.includes(vector[index / 2]?.style ?? '')) continue;
      assert.equal(read[index]?.ok, read[index + 1]?.ok, `${job.out}: QGIS reads both SLDs alike`);
    }
    // SLD holds sizes in pixels where QGIS has millimetres, so QGIS draws an SLD a little off the
    // style itself, Desktop's as Steward's; the categories come back with their colours.
    await apply('points', 'categorized');
    const index = renders.findIndex((job) => job.out.endsWith('/categorized.steward-sld.png'));
    const fromSld = distinctColours(decodePng(readFileSync(renders[index]?.out ?? '')));
    const served = distinctColours(decodePng(await map('points')));
    for (const colour of ['255,0,0', '0,160,0', '0,0,255']) {
      assert.ok(served.has(colour) && fromSld.has(colour), `the category drawn in ${colour} is drawn from the SLD too`);
    }
    // A style made from Steward's JSON, as QGIS Server writes it, is read back too.
    await apply('polygons', 'teal');
    const fill = await fetch(`${stack.api.url}${project}/layers/polygons/style.sld`);
    assert.equal(fill.status, 200);
    const fillFile = join(scratch, 'polygons.sld');
    const fillSld = await fill.text();
    assert.match(fillSld, /#00bbbb/i, "the SLD fills with the style's colour");
    assert.match(fillSld, /<se:Name>polygons<\/se:Name>/, 'the style is named after the layer, as Desktop names it');
    writeFileSync(fillFile, fillSld);
    const fillRead = readSldWithQgis(fillFile, 'vector', sources.polygons);
    assert.equal(fillRead.ok, true, fillRead.message);
    assert.equal((await fetch(`${stack.api.url}${project}/layers/nope/style.sld`)).status, 404);
  });

  it("gives a JSON raster style's QML with the layer's minimum and maximum, which QGIS draws as the project does", async () => {
    assert.equal((await stack.call('POST', `${project}/styles`, grayStretch('dem-stretched'))).status, 201);
    const unapplied = await (await fetch(`${stack.api.url}${project}/styles/dem-stretched/qml`)).text();
    assert.doesNotMatch(unapplied, /<minValue>/, 'no layer has the style yet: it has no values');
    await apply('dem', 'dem-stretched');
    const response = await fetch(`${stack.api.url}${project}/styles/dem-stretched/qml`);
    assert.equal(response.status, 200);
    const qml = await response.text();
    assert.match(qml, /<minValue>[^<]+<\/minValue>/);
    assert.match(qml, /<maxValue>[^<]+<\/maxValue>/);
    const named = await (await fetch(`${stack.api.url}${project}/styles/dem-stretched/qml?layer=dem`)).text();
    assert.equal(named, qml, 'the layer named gives the same values');
    assert.equal((await fetch(`${stack.api.url}${project}/styles/dem-stretched/qml?layer=nope`)).status, 404);
    const file = join(scratch, 'dem-stretched.qml');
    writeFileSync(file, qml);
    const { crs } = (await stack.call('GET', `${project}/layers/dem`)).body as { crs: string };
    const out = join(scratch, 'dem-stretched.qgis.png');
    const [read] = renderWithQgis(
      [
        {
          kind: 'raster',
          source: sources.dem,
          qml: file,
          crs,
          extent: await layerExtent('dem'),
          size: 400,
          dpi: SERVER_DPI,
          out,
        },
      ],
      scratch,
    );
    assert.equal(read?.ok, true, read?.message);
    const served = decodePng(await map('dem'));
    assert.ok(distinctColours(served).size > 50, 'the project draws a stretched grey ramp');
    const { ok, differing } = agree(served, decodePng(readFileSync(out)));
    assert.ok(ok, `QGIS draws the downloaded QML as the project draws the layer (${differing} pixels differ)`);
  });

  it('applies what a QML holds for the whole layer as Load Style does: scale visibility, reference scale, expression fields', async () => {
    const styles = writeLayerLevelStyles(sources, scratch);
    const extent = await layerExtent('points');
    const jobs: RenderJob[] = [];
    const served = new Map<string, Image>();
    const attributes = new Map<string, string>();
    for (const { style } of styles) {
      assert.equal((await put(style, qml(style))).status, 201, style);
      await apply('points', style);
      served.set(style, decodePng(await map('points')));
      const project = await stack.storage.projectXml('desk');
      const layer =
        /<maplayer [^>]*>(?:(?!<\/maplayer>)[\s\S])*<layername>points<\/layername>/.exec(project)?.[0] ?? '';
      attributes.set(style, layer.slice(0, layer.indexOf('>') + 1));
      const out = join(scratch, `${style}.qgis.png`);
      jobs.push({
        kind: 'vector',
        source: sources.points,
        qml: join(scratch, `${style}.qml`),
        crs: 'EPSG:4326',
        extent,
        size: 400,
        dpi: SERVER_DPI,
        out,
      });
    }
    renderWithQgis(jobs, scratch);
    const failures: string[] = [];
    for (const job of jobs) {
      const style = job.out.slice(job.out.lastIndexOf('/') + 1).replace('.qgis.png', '');
      const { ok, differing } = agree(served.get(style) as Image, decodePng(readFileSync(job.out)));
      if (!ok) failures.push(`${style}: ${differing} pixels differ from QGIS's drawing`);
    }
    assert.deepEqual(failures, []);
    assert.equal(served.get('hidden-far')?.paintedPixels(), 0, 'hidden beyond 1:10,000, as the QML says');
    assert.match(attributes.get('hidden-far') ?? '', /hasScaleBasedVisibilityFlag="1"/);
    assert.match(attributes.get('hidden-far') ?? '', /minScale="10000"/);
    assert.match(attributes.get('reference-scale') ?? '', /symbologyReferenceScale="20000000"/);
    assert.ok((served.get('reference-scale')?.paintedPixels() ?? 0) > 3000, 'symbols grow to the reference scale');
    const colours = distinctColours(served.get('virtual-field') as Image);
    for (const colour of ['255,0,0', '0,160,0', '0,0,255']) {
      assert.ok(colours.has(colour), `the category of the expression field drawn in ${colour}`);
    }
    const xml = await stack.storage.projectXml('desk');
    assert.match(xml, /<expressionfields>[\s\S]*name="loud"/, "the QML's expression field is the layer's");
    // Switching to a style whose QML has no scale limit draws the layer again.
    await apply('points', 'hidden-far');
    await apply('points', 'categorized');
    assert.equal(decodePng(await map('points')).paintedPixels() > 0, true, 'the categorized style has no scale limit');
  });

  it('gives the legend as QGIS Server draws it', async () => {
    await apply('points', 'categorized');
    const response = await fetch(`${stack.api.url}${project}/layers/points/legend`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/png');
    const legend = decodePng(Buffer.from(await response.arrayBuffer()));
    const colours = distinctColours(legend);
    for (const colour of ['255,0,0', '0,160,0', '0,0,255']) {
      assert.ok(colours.has(colour), `the legend shows the category drawn in ${colour}`);
    }
    assert.equal((await fetch(`${stack.api.url}${project}/layers/nope/legend`)).status, 404);
  });
  it('gives an uploaded QML or package to a layer in one write, refused naming the fields that layer lacks unless forced', async () => {
    const upload = (style: string, body: string | Buffer, query: string): Promise<Response> => {
      const zip = typeof body !== 'string';
      return fetch(`${stack.api.url}${project}/styles/${style}/${zip ? 'package' : 'qml'}${query}`, {
        method: 'PUT',
        headers: { 'content-type': zip ? 'application/zip' : 'application/xml' },
        body: zip ? new Uint8Array(body) : body,
      });
    };
    const newestVersion = async (): Promise<Version> => {
      const reply = await stack.call('GET', `${project}/versions?limit=1`);
      return (reply.body as { versions: Version[] }).versions[0] as Version;
    };
    const currentStyle = async (layer: string): Promise<string> =>
      ((await stack.call('GET', `${project}/layers/${layer}`)).body as { current_style: string }).current_style;
    /** QGIS Server's own GetMap of the layer, as Steward gives its URL. */
    const getMap = async (layer: string): Promise<Response> => {
      const { url } = (await stack.call('GET', `${project}/layers/${layer}/map/url`)).body as { url: string };
      return fetch(url);
    };
    const zoned = categorizedFillQml('zone', [{ value: 'north', colour: [255, 0, 255] }]);
    const byName = categorizedFillQml('name', [{ value: 'polygons-0', colour: BY_NAME_COLOUR }]);
    // A point style of a packaged SVG, labelled by a field the points lack: refused, its SVG is kept nowhere.
    const labelledByZone = svgMarkerQml('icons/square.svg', 'DejaVu Sans').replace(
      `fieldName="'x'" isExpression="1"`,
      'fieldName="zone" isExpression="0"',
    );
    const svgPackage = stylePackage({ 'zoned.qml': labelledByZone, 'icons/square.svg': squareSvg([0, 200, 0]) });

    const folder = join(stack.projectsDir, 'desk');
    const filesBefore = selectedStorage() === 'filesystem' ? await settledFileBytes(folder) : undefined;
    const projectBefore = await stack.storage.projectXml('desk');
    const stylesBefore = (await stack.call('GET', `${project}/styles`)).body as string[];
    const versionBefore = await newestVersion();
    const refusals: Array<[string, string | Buffer, string, number, string, RegExp]> = [
      ['zoned', zoned, '?layer=polygons&current=true', 422, 'fields_missing', /layer "polygons" has no field "zone"/],
      ['zoned', stylePackage({ 'zoned.qml': zoned }), '?layer=polygons', 422, 'fields_missing', /"zone"/],
      ['zoned', svgPackage, '?layer=points&current=true', 422, 'fields_missing', /layer "points" has no field "zone"/],
      ['by-name', byName, '?layer=nowhere&current=true', 404, 'layer_not_found', /no layer "nowhere"/],
      ['by-name', stylePackage({ 'by-name.qml': byName }), '?layer=nowhere', 404, 'layer_not_found', /"nowhere"/],
      ['by-name', byName, '?layer=dem&current=true', 422, 'unprocessable', /the layer is raster/],
    ];
    for (const [style, body, query, status, code, message] of refusals) {
      const response = await upload(style, body, query);
      const answer = (await response.json()) as { error: string; code: string };
      assert.equal(response.status, status, `${style}${query}: ${answer.error}`);
      assert.equal(answer.code, code, answer.error);
      assert.match(answer.error, message);
    }
    assert.equal(await stack.storage.projectXml('desk'), projectBefore, 'the project file is unchanged');
    assert.deepEqual((await stack.call('GET', `${project}/styles`)).body, stylesBefore);
    assert.equal(await stack.storage.styleQml('desk', 'zoned'), undefined);
    assert.equal(await stack.storage.styleQml('desk', 'by-name'), undefined);
    if (filesBefore)
      assert.deepEqual(await settledFileBytes(folder), filesBefore, "not a byte of the project's folder changed");
    assert.equal((await newestVersion()).id, versionBefore.id, 'no version was recorded');

    const forced = await upload('zoned', zoned, '?layer=polygons&current=true&force=true');
    assert.equal(forced.status, 201, await forced.clone().text());
    assert.deepEqual(await forced.json(), { created: true, warnings: [] });
    assert.equal(await currentStyle('polygons'), 'zoned');
    assert.equal(await stack.storage.styleQml('desk', 'zoned'), zoned);
    const drawn = await getMap('polygons');
    assert.equal(drawn.status, 200);
    assert.equal(drawn.headers.get('content-type'), 'image/png');
    const forcedMap = decodePng(Buffer.from(await drawn.arrayBuffer()));
    assert.equal(forcedMap.width, 400, 'QGIS Server draws the layer with the forced style');

    const given = await upload('by-name', byName, '?layer=polygons&current=true');
    assert.equal(given.status, 201, await given.clone().text());
    assert.equal(await currentStyle('polygons'), 'by-name');
    const image = decodePng(Buffer.from(await (await getMap('polygons')).arrayBuffer()));
    const centre = image.pixel(image.width / 2, image.height / 2);
    assert.deepEqual(centre, [...BY_NAME_COLOUR, 255], `QGIS Server fills the polygon in its category's colour`);
    const version = await newestVersion();
    assert.equal(Number(version.id), Number(versionBefore.id) + 2, 'one version for each of the two uploads');
    assert.equal(version.summary, 'added style by-name, the style of layer polygons');
    assert.equal(version.route, 'PUT /api/projects/:project/styles/:style/qml');
    const content = await fetch(`${stack.api.url}${project}/versions/${version.id}`);
    assert.equal(await content.text(), await stack.storage.projectXml('desk'));
    const audited = await waitFor(
      'the audit entry of the upload',
      async () => {
        const reply = await stack.call('GET', '/api/audit?project=desk&limit=500');
        const entries = (reply.body as Array<{ path: string; status: number }>).filter(
          (entry) => entry.path === `${project}/styles/by-name/qml`,
        );
        return entries.length >= 3 && entries;
      },
      5000,
    );
    assert.deepEqual(
      audited.map((entry) => entry.status),
      [201, 422, 404],
      'the two refusals and the upload, one entry each',
    );

    const packaged = await upload('by-name-too', stylePackage({ 'by-name.qml': byName }), '?layer=polygons');
    assert.equal(packaged.status, 201, await packaged.clone().text());
    const layer = (await stack.call('GET', `${project}/layers/polygons`)).body as {
      current_style: string;
      styles: string[];
    };
    assert.ok(layer.styles.includes('by-name-too'), "the package is in the layer's style manager");
    assert.equal(layer.current_style, 'by-name', 'without current=true the layer draws as before');
  });
});
