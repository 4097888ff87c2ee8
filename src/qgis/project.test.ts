import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { raster, WGS84 } from '../../test/support/sample-layers.js';
import { ProjectDocument } from './project.js';

const mapLayers = (text: string): string[] => text.match(/<maplayer[\s\S]*?<\/maplayer>/g) ?? [];

describe('a project document written more than once', () => {
  it('writes the same text again, reads its layers and still changes them', () => {
    const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
    document.addLayer(raster('first'));
    document.addLayer(raster('second'));
    const written = document.serialize();
    assert.equal(document.serialize(), written);
    assert.deepEqual(Buffer.concat(document.encode()), Buffer.from(written, 'utf8'));
    assert.equal(ProjectDocument.parse(written).serialize(), written);
    assert.deepEqual(
      document.layers().map((layer) => layer.name),
      ['first', 'second'],
    );
    assert.equal(document.layer('second')?.datasource, '/data/second.tif');

    document.mapLayerElement('second')?.attributes.set('stewardTest', '7');
    const [first, second] = mapLayers(Buffer.concat(document.encode()).toString('utf8'));
    assert.deepEqual(first, mapLayers(written)[0]);
    assert.equal(second?.replace(' stewardTest="7"', ''), mapLayers(written)[1]);
  });
});
