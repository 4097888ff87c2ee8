import assert from 'node:assert/strict';

import gdal from 'gdal-async';

import { describe, test } from '../../test/support/node-test.js';

const ROUNDS = 5000;

describe("gdal-async's reference systems (patches/gdal-async)", () => {
  test("a raster's reference system is its own after other datasets' layers were freed", () => {
    const wgs84 = gdal.SpatialReference.fromEPSG(4326);
    const mercator = gdal.SpatialReference.fromEPSG(3857);
    // Wrappers of layers' reference systems that outlive their datasets, as an unreferenced one
    // does until it is collected.
    const outliving: gdal.SpatialReference[] = [];
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const vector = gdal.drivers.get('Memory').create('');
      outliving.push(vector.layers.create('points', wgs84, gdal.wkbPoint).srs as gdal.SpatialReference);
      vector.close();
      const raster = gdal.drivers.get('MEM').create('', 1, 1, 1);
      raster.srs = mercator;
      const read = raster.srs;
      if (read?.getAuthorityCode(null) !== '3857') wrong.push(read?.getAuthorityCode(null) ?? 'none');
      raster.close();
    }
    assert.deepEqual(wrong, [], `${wrong.length} of ${ROUNDS} rasters in EPSG:3857 were read in another system`);
    assert.ok(outliving.every((srs) => srs.getAuthorityCode(null) === '4326'));
  });
});
