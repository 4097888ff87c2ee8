import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { raster, WGS84 } from '../../test/support/sample-layers.js';
import { ProjectDocument } from '../qgis/project.js';
import { RecentVersions } from './recent-versions.js';

const ref = { name: 'p', schema: 'public' };

/** Every layer of a project of `names`, as a write knows them. */
function layersNamed(...names: string[]) {
  const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
  document.layers();
  for (const name of names) document.addLayer(raster(name));
  const layers = document.everyLayer();
  assert.ok(layers);
  return layers;
}

describe('versions kept at hand', () => {
  it('drops the oldest content beyond its bytes, then the oldest versions beyond its layers', () => {
    const recent = new RecentVersions(10, 3);
    recent.keep(ref, 1, 'a', { pieces: [Buffer.alloc(6)] });
    recent.keep(ref, 2, 'b', { pieces: [Buffer.alloc(6)], layers: layersNamed('roads') });
    assert.equal(recent.get(ref, 1, 'a'), undefined, 'beyond the bytes, with no layers: dropped whole');
    recent.keep(ref, 3, 'c', { pieces: [Buffer.alloc(3), Buffer.alloc(3)], layers: layersNamed('rivers') });
    assert.deepEqual(
      recent.get(ref, 2, 'b')?.layers?.map((layer) => layer.name),
      ['roads'],
      'its content dropped, its layers kept',
    );
    assert.equal(recent.get(ref, 2, 'b')?.pieces, undefined);
    assert.equal(recent.get(ref, 3, 'c')?.pieces?.length, 2);
    assert.equal(recent.get(ref, 3, 'written elsewhere'), undefined, 'another version of the same id');
    const shared = Buffer.alloc(4);
    recent.keep(ref, 4, 'd', { pieces: [shared.subarray(0, 2)] });
    recent.keep(ref, 5, 'e', { pieces: [shared.subarray(0, 2), shared.subarray(2)] });
    assert.equal(recent.get(ref, 3, 'c')?.pieces?.length, 2, 'memory two versions share is counted once');
    recent.keep(ref, 6, 'f', { layers: layersNamed('lakes', 'parks') });
    assert.equal(recent.get(ref, 2, 'b'), undefined, 'beyond the layers');
    assert.ok(recent.get(ref, 3, 'c') && recent.get(ref, 6, 'f'));
    recent.forget(ref);
    assert.equal(recent.get(ref, 5, 'e'), undefined);
  });
});
