/** A parsed project keeps no view of its source text: a heap snapshot (seconds) finds the largest string. */
import assert from 'node:assert/strict';
import { getHeapSnapshot } from 'node:v8';

import { deferredMarkup } from '../src/qgis/xml/node.js';
import { parseXml } from '../src/qgis/xml/parse.js';
import { it } from './support/node-test.js';

it('keeps no view of its source, Latin-1 or not', { timeout: 600_000 }, async () => {
  const trees = ['Białowieża', 'Bratislava'].flatMap((release) => {
    const source = largeProject(release);
    const [deferred] = parseXml(source, { deferred: new Set(['projectlayers']) }).root.children;
    assert.equal(deferred?.kind, 'deferred');
    return [parseXml(source), parseXml(deferredMarkup(deferred))];
  });
  assert.equal(trees.length, 4);
  // A view of a source, or of a deferred element's text, would keep it whole.
  const largest = await largestString();
  assert.ok(largest < LARGE_PROJECT_LAYERS * 10, `a string of ${largest} bytes is held`);
});

const LARGE_PROJECT_LAYERS = 40_000;

/** A project larger than any other string of the test's process. */
function largeProject(release: string): string {
  const layer = '<maplayer><id>a layer id longer than a short slice</id></maplayer>';
  return `<qgis version="${release}" title="a title longer than a short slice"><projectlayers>${layer.repeat(LARGE_PROJECT_LAYERS)}</projectlayers></qgis>`;
}

/** Bytes of the largest string the heap holds (the snapshot collects garbage first). */
async function largestString(): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(chunk as Buffer);
  const snapshot = JSON.parse(Buffer.concat(chunks).toString('utf8')) as HeapSnapshot;
  const {
    node_fields: fields,
    node_types: [types],
  } = snapshot.snapshot.meta;
  const stride = fields.length;
  const [typeAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('self_size')];
  let largest = 0;
  for (let node = 0; node < snapshot.nodes.length; node += stride) {
    const type = types[snapshot.nodes[node + typeAt] ?? 0];
    if (type === 'string') largest = Math.max(largest, snapshot.nodes[node + sizeAt] ?? 0);
  }
  return largest;
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
}
