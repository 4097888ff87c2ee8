import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';
import {
  type CorpusSources,
  corpusSources,
  type CorpusStyle,
  type SaveSldJob,
  saveSldWithQgis,
  writeCorpus,
  writeRasterSldStyles,
} from './support/style-corpus.js';
import { xmlDifference } from './support/style-oracle.js';
import { grayStretch } from './support/write-bodies.js';

describe("a raster layer's SLD is the document QGIS Desktop's Save as SLD writes for its current style", () => {
  let stack: Stack;
  let data: Fixtures;
  let sources: CorpusSources;
  let styles: CorpusStyle[];
  let scratch: string;
  const project = '/api/projects/rasters';

  /** Steward's SLD of the layer drawing with `style`, and Desktop's for the same QML, as files. */
  const download = async (layer: keyof CorpusSources, style: string): Promise<SaveSldJob> => {
    const applied = await stack.call('POST', `${project}/layers/${layer}/style`, { name: style, current: true });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    const response = await fetch(`${stack.api.url}${project}/layers/${layer}/style.sld`);
    assert.equal(response.status, 200, style);
    assert.equal(response.headers.get('content-type'), 'application/vnd.ogc.sld+xml');
    writeFileSync(join(scratch, `${style}.steward.sld`), await response.text());
    const qml = join(scratch, `${style}.qml`);
    return { kind: 'raster', source: sources[layer], name: layer, qml, out: join(scratch, `${style}.desktop.sld`) };
  };

  /** The styles whose SLD is not Desktop's, with where it differs. */
  const differences = (jobs: SaveSldJob[], names: string[]): string[] => {
    const saved = saveSldWithQgis(jobs, scratch);
    assert.ok(
      saved.every((result) => result.ok),
      JSON.stringify(saved),
    );
    return names.flatMap((style) => {
      const ours = readFileSync(join(scratch, `${style}.steward.sld`), 'utf8');
      const difference = xmlDifference(ours, readFileSync(join(scratch, `${style}.desktop.sld`), 'utf8'));
      return difference ? [`${style}: ${difference}`] : [];
    });
  };

  before(async () => {
    data = makeFixtures();
    sources = corpusSources(data);
    scratch = mkdtempSync(join(tmpdir(), 'steward-raster-sld-'));
    const corpus = writeCorpus(sources, scratch).filter((entry) => entry.kind === 'raster');
    styles = [...corpus, ...writeRasterSldStyles(sources, scratch)];
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'rasters', author: 'test' });
    for (const name of ['rgb', 'dem', 'classes'] as const) {
      const reply = await stack.call('POST', `${project}/layers`, { type: 'raster', name, datasource: sources[name] });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
    }
    for (const { style } of styles) {
      const response = await fetch(`${stack.api.url}${project}/styles/${style}/qml`, {
        method: 'PUT',
        headers: { 'content-type': 'application/xml' },
        body: readFileSync(join(scratch, `${style}.qml`)),
      });
      assert.equal(response.status, 201, `${style}: ${await response.text()}`);
    }
  });
  after(async () => {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('writes every raster renderer, the layer filters, opacity, scales and clipping as Desktop does', async () => {
    assert.ok(styles.length >= 13, `QGIS wrote ${styles.length} raster styles`);
    const jobs: SaveSldJob[] = [];
    for (const { style, layer } of styles) jobs.push(await download(layer, style));
    assert.deepEqual(
      differences(
        jobs,
        styles.map(({ style }) => style),
      ),
      [],
    );
    const pseudocolor = readFileSync(join(scratch, 'pseudocolor-discrete.steward.sld'), 'utf8');
    assert.match(pseudocolor, /<sld:ColorMap type="intervals">/, 'a discrete ramp is a map of intervals');
    assert.match(pseudocolor, /quantity="inf"/, 'an open last class is written as QGIS writes it');
    const clipped = readFileSync(join(scratch, 'gray-clipped.steward.sld'), 'utf8');
    assert.match(clipped, /<sld:MaxScaleDenominator>50000<\/sld:MaxScaleDenominator>/);
    // A clipping stretch names the band's own minimum, as QGIS reads it from the raster.
    assert.match(clipped, /<sld:VendorOption name="minValue">0\.00147392<\/sld:VendorOption>/);
  });

  it("writes a JSON style's limits taken from the layer as Desktop writes the QML Steward gives for it", async () => {
    assert.equal((await stack.call('POST', `${project}/styles`, grayStretch('dem-json'))).status, 201);
    const job = await download('dem', 'dem-json');
    const qml = await fetch(`${stack.api.url}${project}/styles/dem-json/qml?layer=dem`);
    writeFileSync(job.qml, await qml.text());
    assert.deepEqual(differences([job], ['dem-json']), []);
    const steward = readFileSync(join(scratch, 'dem-json.steward.sld'), 'utf8');
    assert.match(steward, /name="maxValue">\d/, "the SLD has the layer's maximum");
  });

  it('answers 404 for a layer the project lacks', async () => {
    assert.equal((await fetch(`${stack.api.url}${project}/layers/nope/style.sld`)).status, 404);
  });
});
