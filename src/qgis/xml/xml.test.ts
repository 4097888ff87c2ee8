import assert from 'node:assert/strict';

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

  it('rejects broken documents', () => {
    for (const broken of ['<a><b></a>', '<a>', '', '<a></a><b></b>', '<a attr="x></a>']) {
      assert.throws(() => parseXml(broken), XmlSyntaxError, broken);
    }
  });
});
