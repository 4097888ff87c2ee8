/**
 * A GeoPackage served by the production pool (nginx in front of two qgis_mapserv.fcgi processes):
 * GetMap with FILTER, WFS-T inserts, GetFeature and plain GetMap, alternated many times and sent
 * in pairs so that both processes serve each kind, every answer checked (no error document, the
 * features there, their pixels drawn). Under FastCGI a process's environment while it serves a
 * request is the request's parameters: whatever SQLite, GDAL or OGR read from it lazily (a
 * temporary folder, a configuration option) must still let every process open the GeoPackage.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { freePort } from '../src/runtime/ports.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, pixelsOf } from './support/png.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack } from './support/stack.js';
import { pluginEnv, untilRegistered } from './support/test-storage.js';

/** CRS:84 (lon, lat), 10 pixels a degree: the one-degree squares of write_access_project.py. */
const VIEW = 'VERSION=1.3.0&STYLES=&CRS=CRS:84&BBOX=0,0,4,4&WIDTH=40&HEIGHT=40&TRANSPARENT=TRUE';
const RED = [255, 0, 0] as const;
const BLUE = [0, 0, 255] as const;
const ROUNDS = 15;
/** Concurrent inserts, each of its own WFS-T Transaction, and how many times they are sent. */
const CONCURRENT_INSERTS = 8;
const CONCURRENT_ROUNDS = 40;

describe('a GeoPackage served by the production pool', () => {
  let stack: Stack;
  let map = '';
  const log: string[] = [];
  /** What GDAL complained of in the pool's log, for a failed assertion's message. */
  const said = (when: string): string => `${when}; GDAL: ${log.filter((line) => line.startsWith('ERROR')).join(' | ')}`;

  const ows = async (query: string, init: RequestInit = {}): Promise<{ type: string; body: Buffer }> => {
    const response = await fetch(`${stack.qgis.url}?MAP=${encodeURIComponent(map)}&${query}`, init);
    const body = Buffer.from(await response.arrayBuffer());
    assert.equal(response.status, 200, `${query}: ${body.toString().slice(0, 300)}`);
    return { type: response.headers.get('content-type') ?? '', body };
  };
  /** The red (roads) and blue (secret) pixels of a map of both layers. */
  const pixels = async (query: string): Promise<[number, number]> => {
    const answer = await ows(`SERVICE=WMS&REQUEST=GetMap&FORMAT=image/png&${VIEW}&LAYERS=roads,secret${query}`);
    assert.equal(answer.type, 'image/png', `GetMap${query}: ${answer.body.toString().slice(0, 300)}`);
    const image = decodePng(answer.body);
    return [pixelsOf(image, RED), pixelsOf(image, BLUE)];
  };
  const count = async (layer: string): Promise<number> => {
    const answer = await ows(
      `SERVICE=WFS&VERSION=1.1.0&REQUEST=GetFeature&TYPENAME=${layer}&OUTPUTFORMAT=application/json`,
    );
    const text = answer.body.toString('utf8');
    return (JSON.parse(text) as { features: unknown[] }).features.length;
  };
  const insert = async (owner = 'eve'): Promise<void> => {
    const answer = await ows('SERVICE=WFS&VERSION=1.1.0&REQUEST=Transaction', {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: transaction(owner),
    });
    const text = answer.body.toString();
    assert.match(text, /<totalInserted>1<\/totalInserted>/, `${text.slice(0, 500)} ${said('insert')}`);
  };

  before(async () => {
    // With the monitoring plugin, as npm start runs QGIS Server: WFS-T Transactions take turns.
    const monitoringPort = await freePort();
    stack = await startStack(
      { monitoringPort },
      { onLog: (line) => log.push(line), env: pluginEnv(monitoringPort) },
      'filesystem',
    );
    await untilRegistered((method, path) => stack.call(method, path));
    const folder = join(stack.projectsDir, 'town');
    mkdirSync(folder);
    map = join(folder, 'town.qgs');
    runPyqgisScript('write_access_project.py', map);
  });
  after(() => stack?.stop());

  it('answers every map, filter, insert and feature request of both processes', async () => {
    let inserted = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      // Two at a time: nginx's least_conn hands one to each process. Both read the GeoPackage
      // first, then filter it (which opens it for writing), then write to it.
      // Roads at (0,0) and (0,2) public, (2,0) private, the inserted ones at (3,3); secret at (2,2).
      const full = await Promise.all([pixels(''), pixels('')]);
      assert.deepEqual(full, twice(inserted ? 400 : 300, 100), said(`round ${round}`));
      const filtered = await Promise.all([1, 2].map(() => pixels(`&FILTER=roads:"kind" = 'public'`)));
      assert.deepEqual(filtered, twice(inserted ? 300 : 200, 100), said(`round ${round}`));
      // One after the other (SQLite has one writer at a time): least_conn alternates them.
      await insert();
      await insert();
      inserted += 2;
      const counts = await Promise.all([count('roads'), count('secret'), count('roads'), count('secret')]);
      assert.deepEqual(counts, [3 + inserted, 1, 3 + inserted, 1], said(`round ${round}`));
      assert.deepEqual(
        log.filter((line) => line.startsWith('ERROR')),
        [],
        'GDAL reported no error',
      );
    }
  });

  it('keeps every row of WFS-T inserts sent to both processes at once', async () => {
    const before = roads().rows;
    const sent: string[] = [];
    const failed: string[] = [];
    for (let round = 0; round < CONCURRENT_ROUNDS; round += 1) {
      // least_conn hands half of them to each process: two writers of one SQLite file at a time.
      const batch = Array.from({ length: CONCURRENT_INSERTS }, (_, index) => `writer-${round}-${index}`);
      const answers = await Promise.allSettled(batch.map((owner) => insert(owner)));
      for (const answer of answers) if (answer.status === 'rejected') failed.push(String(answer.reason));
      sent.push(...batch);
    }
    assert.deepEqual(failed, [], `${failed.length} of ${sent.length} inserts failed`);
    const { rows: after, counted } = roads();
    assert.equal(after.length, before.length + sent.length);
    assert.deepEqual(after.filter((owner) => owner.startsWith('writer-')).sort(), [...sent].sort());
    // The count GeoPackages keep beside the table (what QGIS answers as the feature count).
    assert.equal(counted, after.length);
    assert.deepEqual(
      log.filter((line) => line.startsWith('ERROR')),
      [],
      'GDAL reported no error',
    );
  });

  /** The owner of every road in the GeoPackage as GDAL reads the file, and the count it keeps. */
  function roads(): { rows: string[]; counted: number } {
    const dataset = gdal.open(map.replace(/\.qgs$/, '.gpkg'));
    try {
      const layer = dataset.layers.get('roads');
      return {
        rows: layer.features.map((feature) => String(feature.fields.get('owner'))),
        counted: layer.features.count(false),
      };
    } finally {
      dataset.close();
    }
  }
});

/** The same answer of both processes. */
function twice(red: number, blue: number): Array<[number, number]> {
  return [
    [red, blue],
    [red, blue],
  ];
}

/** A WFS 1.1.0 insert of one public road of `owner` at (3,3). */
function transaction(owner: string): string {
  return `<wfs:Transaction service="WFS" version="1.1.0" xmlns:wfs="http://www.opengis.net/wfs"
 xmlns:gml="http://www.opengis.net/gml" xmlns:qgs="http://www.qgis.org/gml">
 <wfs:Insert><qgs:roads><qgs:geometry><gml:Polygon srsName="EPSG:4326"><gml:exterior><gml:LinearRing>
 <gml:posList srsDimension="2">3 3 3 4 4 4 4 3 3 3</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon>
 </qgs:geometry><qgs:kind>public</qgs:kind><qgs:owner>${owner}</qgs:owner></qgs:roads></wfs:Insert></wfs:Transaction>`;
}
