import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { agree, distinctColours, SERVER_DPI } from './support/drawings.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { TEST_QGIS } from './support/qgis-runtime.js';
import { OTHER_FILL, RASTER_SLD, type SldCase, VECTOR_SLDS } from './support/sld-documents.js';
import { type Stack, startStack } from './support/stack.js';
import {
  type CorpusSources,
  corpusSources,
  readSldWithQgis,
  type RenderJob,
  renderWithQgis,
  type SaveSldJob,
  saveSldWithQgis,
} from './support/style-corpus.js';
import { xmlDifference } from './support/style-oracle.js';

const SLD_TYPE = 'application/vnd.ogc.sld+xml';

interface Version {
  id: string;
  summary: string;
}

describe(`SLD uploads: stored as QGIS ${TEST_QGIS.version}'s loadSldStyle reads them, drawn as QGIS draws them`, () => {
  let stack: Stack;
  let data: Fixtures;
  let sources: CorpusSources;
  let scratch: string;
  const project = '/api/projects/geoserver';
  const put = (
    layer: string,
    style: string,
    body: string,
    type = SLD_TYPE,
    query = '?current=true',
  ): Promise<Response> =>
    fetch(`${stack.api.url}${project}/layers/${layer}/styles/${style}/sld${query}`, {
      method: 'PUT',
      headers: { 'content-type': type },
      body,
    });
  const map = async (layer: string): Promise<Buffer> => {
    const response = await fetch(`${stack.api.url}${project}/layers/${layer}/map`);
    assert.equal(response.status, 200);
    return Buffer.from(await response.arrayBuffer());
  };
  /** A PyQGIS drawing of `layer` with the SLD file `sld`, as Steward's map of it is drawn. */
  const renderJob = async (layer: keyof CorpusSources, sld: string, out: string): Promise<RenderJob> => {
    const { url } = (await stack.call('GET', `${project}/layers/${layer}/map/url`)).body as { url: string };
    const query = new URL(url).searchParams;
    const { bbox } = (await stack.call('GET', `${project}/layers/${layer}`)).body as { bbox: string };
    const extent = bbox.split(/[ ,]+/).map(Number) as [number, number, number, number];
    const kind = layer === 'classes' ? ('raster' as const) : ('vector' as const);
    const size = Number(query.get('WIDTH'));
    return {
      kind,
      source: sources[layer],
      qml: '',
      sld,
      crs: query.get('CRS') ?? '',
      extent,
      size,
      dpi: SERVER_DPI,
      out,
    };
  };
  const newestVersion = async (): Promise<Version> => {
    const reply = await stack.call('GET', `${project}/versions?limit=1`);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return (reply.body as { versions: Version[] }).versions[0] as Version;
  };
  /** The upload after `previous` wrote the project once: one version, told by `summary`, holding the project as stored. */
  const assertOneVersion = async (previous: Version, summary: string): Promise<void> => {
    const newest = await newestVersion();
    assert.equal(Number(newest.id), Number(previous.id) + 1, `one version after ${previous.id}: ${newest.summary}`);
    assert.equal(newest.summary, summary);
    const content = await fetch(`${stack.api.url}${project}/versions/${newest.id}`);
    assert.equal(await content.text(), await stack.storage.projectXml('geoserver'));
  };
  /** Where Steward's maps and PyQGIS's drawings of the same SLDs disagree. */
  const disagreements = (jobs: RenderJob[], served: Buffer[]): string[] => {
    const read = renderWithQgis(jobs, scratch);
    return jobs.flatMap((job, index) => {
      if (!read[index]?.ok) return [`${job.out}: QGIS did not read the SLD: ${read[index]?.message}`];
      const server = decodePng(served[index] ?? Buffer.alloc(0));
      const qgis = decodePng(readFileSync(job.out));
      if (qgis.paintedPixels() === 0) return [`${job.out}: QGIS drew nothing`];
      const { ok, differing } = agree(server, qgis);
      return ok ? [] : [`${job.out}: ${differing} of ${qgis.paintedPixels()} painted pixels differ`];
    });
  };

  before(async () => {
    data = makeFixtures();
    sources = corpusSources(data);
    scratch = mkdtempSync(join(tmpdir(), 'steward-sld-upload-'));
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'geoserver', author: 'test' });
    for (const [name, type] of [
      ['points', 'vector'],
      ['lines', 'vector'],
      ['polygons', 'vector'],
      ['classes', 'raster'],
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

  it('draws each uploaded SLD as PyQGIS draws the layer after loadSldStyle', async () => {
    const types = [SLD_TYPE, 'application/xml', 'text/xml; charset=utf-8'];
    const jobs: RenderJob[] = [];
    const served: Buffer[] = [];
    const failures: string[] = [];
    for (const [index, entry] of VECTOR_SLDS.entries()) {
      const response = await put(entry.layer, entry.style, entry.sld, types[index % types.length]);
      assert.equal(response.status, 201, `${entry.style}: ${await response.text()}`);
      const layer = (await stack.call('GET', `${project}/layers/${entry.layer}`)).body as { current_style: string };
      assert.equal(layer.current_style, entry.style);
      const drawn = await map(entry.layer);
      failures.push(...colourFailures(entry, distinctColours(decodePng(drawn))));
      const file = join(scratch, `${entry.style}.sld`);
      writeFileSync(file, entry.sld);
      jobs.push(await renderJob(entry.layer, file, join(scratch, `${entry.style}.qgis.png`)));
      served.push(drawn);
    }
    failures.push(...disagreements(jobs, served));
    assert.deepEqual(failures, []);
  });

  it('stores what QGIS read: a rule-based renderer for rules, filters and scales, a single symbol otherwise', async () => {
    const renderer = async (style: string): Promise<string> => {
      const response = await fetch(`${stack.api.url}${project}/styles/${style}/qml`);
      assert.equal(response.status, 200);
      return /<renderer-v2 [^>]*type="([^"]+)"/.exec(await response.text())?.[1] ?? '';
    };
    assert.equal(await renderer('simple-fill'), 'singleSymbol');
    assert.equal(await renderer('point-marks'), 'singleSymbol');
    assert.equal(await renderer('filtered-rules'), 'RuleRenderer');
    assert.equal(await renderer('scales'), 'RuleRenderer');
    const labels = await (await fetch(`${stack.api.url}${project}/styles/labels/qml`)).text();
    assert.match(labels, /<labeling type="simple">/);
    assert.match(labels, /fieldName="name"/);
  });

  it("gives back, as style.sld, Desktop's Save as SLD of the stored style, drawn as uploaded where QGIS keeps it", async () => {
    const saves: SaveSldJob[] = [];
    const jobs: RenderJob[] = [];
    const served: Buffer[] = [];
    for (const entry of VECTOR_SLDS) {
      const applied = await stack.call('POST', `${project}/layers/${entry.layer}/style`, {
        name: entry.style,
        current: true,
      });
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      const response = await fetch(`${stack.api.url}${project}/layers/${entry.layer}/style.sld`);
      assert.equal(response.status, 200, entry.style);
      const file = join(scratch, `${entry.style}.back.sld`);
      writeFileSync(file, await response.text());
      const qml = join(scratch, `${entry.style}.qml`);
      writeFileSync(qml, await (await fetch(`${stack.api.url}${project}/styles/${entry.style}/qml`)).text());
      const out = join(scratch, `${entry.style}.desktop.sld`);
      saves.push({ kind: 'vector', source: sources[entry.layer], name: entry.layer, qml, out });
      if (!entry.reshapedBySld) {
        jobs.push(await renderJob(entry.layer, file, join(scratch, `${entry.style}.back.png`)));
        served.push(await map(entry.layer));
      }
    }
    assert.ok(saveSldWithQgis(saves, scratch).every((saved) => saved.ok));
    const differences = saves.flatMap(({ out }, index) => {
      const ours = readFileSync(join(scratch, `${VECTOR_SLDS[index]?.style}.back.sld`), 'utf8');
      const difference = xmlDifference(ours, readFileSync(out, 'utf8'));
      return difference === undefined ? [] : [`${VECTOR_SLDS[index]?.style}: ${difference}`];
    });
    assert.deepEqual(differences, []);
    assert.ok(jobs.length >= 3, 'three of the SLDs come back as QGIS drew them');
    assert.deepEqual(disagreements(jobs, served), []);
  });

  it('replaces a style (200) in the layers that draw it, and without current=true leaves the current style', async () => {
    const before = distinctColours(decodePng(await map('polygons')));
    assert.ok(before.has('0,170,0'), 'the layer draws the scales style');
    const newest = await newestVersion();
    const added = await put('polygons', 'other', OTHER_FILL, SLD_TYPE, '');
    assert.equal(added.status, 201, await added.text());
    await assertOneVersion(newest, 'added style other, given to layer polygons');
    const layer = (await stack.call('GET', `${project}/layers/polygons`)).body as {
      current_style: string;
      styles: string[];
    };
    assert.equal(layer.current_style, 'scales');
    assert.ok(layer.styles.includes('other'), `the layer has the style (${layer.styles.join(', ')})`);
    const beforeReplace = await newestVersion();
    const replaced = await put('polygons', 'scales', OTHER_FILL, SLD_TYPE, '');
    assert.equal(replaced.status, 200, await replaced.text());
    await assertOneVersion(beforeReplace, 'replaced style scales, given to layer polygons');
    const after = distinctColours(decodePng(await map('polygons')));
    assert.ok(after.has('170,0,170') && !after.has('0,170,0'), 'the layer draws the replacement');
  });

  it("answers for a raster's colour map what QGIS's loadSldStyle does with it", async () => {
    const file = join(scratch, 'classes.sld');
    writeFileSync(file, RASTER_SLD);
    const oracle = readSldWithQgis(file, 'raster', sources.classes);
    const response = await put('classes', 'colour-map', RASTER_SLD);
    const body = await response.text();
    if (!oracle.ok) {
      assert.equal(response.status, 422, body);
      assert.match((JSON.parse(body) as { error: string }).error, /QGIS reads no style for layer "classes"/);
      const styles = (await stack.call('GET', `${project}/styles`)).body as string[];
      assert.ok(!styles.includes('colour-map'), 'nothing is stored');
      return;
    }
    assert.equal(response.status, 201, body);
    const job = await renderJob('classes', file, join(scratch, 'classes.qgis.png'));
    assert.deepEqual(disagreements([job], [await map('classes')]), []);
  });

  it('refuses other content types (415), documents that are not SLD (400) and SLD QGIS reads nothing from (422)', async () => {
    const projectBefore = await stack.storage.projectXml('geoserver');
    const stylesBefore = (await stack.call('GET', `${project}/styles`)).body as string[];
    const refusals: Array<[string, string, string, number, RegExp]> = [
      ['polygons', VECTOR_SLDS[0]?.sld ?? '', 'text/plain', 415, /application\/vnd\.ogc\.sld\+xml/],
      ['polygons', '<StyledLayerDescriptor><NamedLayer>', SLD_TYPE, 400, /not well-formed/],
      ['polygons', '<qgis version="3.22"/>', SLD_TYPE, 400, /root element is <qgis>/],
      [
        'polygons',
        '<!DOCTYPE x [<!ENTITY e "e">]><StyledLayerDescriptor>&e;</StyledLayerDescriptor>',
        SLD_TYPE,
        400,
        /DOCTYPE/,
      ],
      ['polygons', '<StyledLayerDescriptor>fish & chips</StyledLayerDescriptor>', SLD_TYPE, 400, /not well-formed XML/],
      ['polygons', '<StyledLayerDescriptor version="1.0.0"/>', SLD_TYPE, 422, /NamedLayer/],
      ['rivers', VECTOR_SLDS[0]?.sld ?? '', SLD_TYPE, 404, /rivers/],
    ];
    for (const [layer, body, type, status, message] of refusals) {
      const response = await put(layer, 'refused', body, type);
      const answer = (await response.json()) as { error: string };
      assert.equal(response.status, status, `${body}: ${answer.error}`);
      assert.match(answer.error, message);
    }
    assert.equal(await stack.storage.projectXml('geoserver'), projectBefore, 'the project is unchanged');
    assert.deepEqual((await stack.call('GET', `${project}/styles`)).body, stylesBefore);
  });
});

/** The colours a case's drawing lacks or holds against its expectations. */
function colourFailures(entry: SldCase, colours: Set<string>): string[] {
  return [
    ...entry.drawn.filter((colour) => !colours.has(colour)).map((colour) => `${entry.style}: ${colour} is not drawn`),
    ...entry.absent.filter((colour) => colours.has(colour)).map((colour) => `${entry.style}: ${colour} is drawn`),
  ];
}
