import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { rewriteStyleFiles, styleReferences } from './style-references.js';
import { parseXml } from './xml/parse.js';
import { serializeXml } from './xml/serialize.js';

/** What QGIS 3.22 writes (its data-defined collection named "name" too) for an SVG marker, a raster marker, a font marker and labels on an SVG background. */
const QML = `<qgis>
 <renderer-v2 type="singleSymbol"><symbols><symbol type="marker" name="0">
  <layer class="SvgMarker"><Option type="Map"><Option type="QString" value="/home/me/tree.svg" name="name"/></Option><prop v="/home/me/tree.svg" k="name"/>
   <data_defined_properties><Option type="Map"><Option type="QString" value="" name="name"/></Option></data_defined_properties></layer>
  <layer class="RasterMarker"><Option type="Map"><Option type="QString" value="pic.png" name="imageFile"/></Option><prop v="pic.png" k="imageFile"/></layer>
  <layer class="FontMarker"><Option type="Map"><Option type="QString" value="Comic Sans MS" name="font"/></Option></layer>
  <layer class="SvgMarker"><Option type="Map"><Option type="QString" value="base64:PHN2Zy8+" name="name"/></Option></layer>
 </symbol></symbols></renderer-v2>
 <labeling type="simple"><settings><text-style fontFamily="Fancy Font"><background shapeSVGFile="bg.svg"/></text-style></settings></labeling>
</qgis>`;

describe('style references', () => {
  it("reads the files and fonts of a QML's symbols and labels, leaving embedded SVGs", () => {
    const references = styleReferences(parseXml(QML).root);
    assert.deepEqual(references.svg.sort(), ['/home/me/tree.svg', 'bg.svg']);
    assert.deepEqual(references.images, ['pic.png']);
    assert.deepEqual(references.fonts.sort(), ['Comic Sans MS', 'Fancy Font']);
  });

  it('rewrites every place QGIS reads a file from, and nothing else', () => {
    const document = parseXml(QML);
    const moved: Record<string, string> = {
      '/home/me/tree.svg': '/p/a.svg',
      'pic.png': '/p/b.png',
      'bg.svg': '/p/c.svg',
    };
    rewriteStyleFiles(document.root, (file) => moved[file]);
    const text = serializeXml(document);
    assert.equal(text.match(/"\/p\/a\.svg"/g)?.length, 2);
    assert.equal(text.match(/"\/p\/b\.png"/g)?.length, 2);
    assert.match(text, /shapeSVGFile="\/p\/c\.svg"/);
    assert.match(text, /base64:PHN2Zy8\+/);
    const back = Object.fromEntries(Object.entries(moved).map(([from, to]) => [to, from]));
    rewriteStyleFiles(document.root, (file) => back[file]);
    assert.equal(serializeXml(document), serializeXml(parseXml(QML)), 'nothing else changed');
  });
});
