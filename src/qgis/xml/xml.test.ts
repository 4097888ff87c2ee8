import assert from 'node:assert/strict';
import { getHeapSnapshot } from 'node:v8';

import { describe, it } from '../../../test/support/node-test.js';
import { childText, deferredMarkup, firstChild } from './node.js';
import { parseXml, XmlSyntaxError } from './parse.js';
import { serializeXml, serializeXmlUtf8 } from './serialize.js';

const DOCUMENT = `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16-Białowieża" projectname="a &amp; b 🌍">
  <!-- a comment -->
  <title></title>
  <empty/>
  <text>x &lt; y ≤ z</text>
  <data><![CDATA[<raw> & stuff]]></data>
  <projectlayers>
    <maplayer type="vector"><id>one</id><inner><maplayer-like/></inner></maplayer>
    <maplayer type="raster"><id>two</id></maplayer>
  </projectlayers>
  <attr value="line&#xa;break &quot;quoted&quot;"/>
</qgis>
`;

describe('the XML tree', () => {
  it('writes back exactly what it read', () => {
    assert.equal(serializeXml(parseXml(DOCUMENT)), DOCUMENT);
    assert.equal(serializeXml(parseXml(DOCUMENT, { deferred: new Set(['maplayer']) })), DOCUMENT);
  });

  it('writes back exactly the UTF-8 it read, deferred elements included', () => {
    const expected = Buffer.from(DOCUMENT, 'utf8');
    assert.deepEqual(Buffer.concat(serializeXmlUtf8(parseXml(DOCUMENT))), expected);
    assert.deepEqual(
      Buffer.concat(serializeXmlUtf8(parseXml(DOCUMENT, { deferred: new Set(['maplayer', 'title']) }))),
      expected,
    );
  });

  it('writes large deferred elements as the bytes they hold and joins the small ones with the text around them', () => {
    const large = `<maplayer type="raster"><id>large</id><note>${'é'.repeat(2000)}</note></maplayer>`;
    const text = DOCUMENT.replace('<maplayer type="raster"><id>two</id></maplayer>', `${large}\n    ${large}`);
    const document = parseXml(text, { deferred: new Set(['maplayer']) });
    const pieces = serializeXmlUtf8(document);
    assert.deepEqual(Buffer.concat(pieces), Buffer.from(text, 'utf8'));
    const held = firstChild(document.root, 'projectlayers')?.children.flatMap((node) =>
      node.kind === 'deferred' && node.utf8.byteLength > 1024 ? [node.utf8] : [],
    );
    assert.equal(held?.length, 2);
    for (const bytes of held ?? []) assert.ok(pieces.includes(bytes));
    assert.equal(pieces.length, 5);
  });

  it('decodes entities in text and attributes', () => {
    const { root } = parseXml(DOCUMENT);
    assert.equal(root.attributes.get('projectname'), 'a & b 🌍');
    assert.equal(root.attributes.get('version'), '3.22.16-Białowieża');
    assert.equal(childText(root, 'text'), 'x < y ≤ z');
    assert.equal(childText(root, 'data'), '<raw> & stuff');
    assert.equal(firstChild(root, 'attr')?.attributes.get('value'), 'line\nbreak "quoted"');
    assert.equal(childText(parseXml('<a>&#x2264;&#8805;&apos;</a>').root), "≤≥'");
  });

  it('keeps deferred elements as their exact source text', () => {
    const { root } = parseXml(DOCUMENT, { deferred: new Set(['maplayer']) });
    const layers = firstChild(root, 'projectlayers')?.children.filter((node) => node.kind === 'deferred') ?? [];
    assert.deepEqual(
      layers.map((node) => (node.kind === 'deferred' ? deferredMarkup(node) : '')),
      [
        '<maplayer type="vector"><id>one</id><inner><maplayer-like/></inner></maplayer>',
        '<maplayer type="raster"><id>two</id></maplayer>',
      ],
    );
  });

  it('keeps no view of its source, Latin-1 or not', async () => {
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

  it('rejects broken documents', () => {
    for (const broken of ['<a><b></a>', '<a>', '', '<a></a><b></b>', '<a attr="x></a>']) {
      assert.throws(() => parseXml(broken), XmlSyntaxError, broken);
    }
  });
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
