import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { ConfigError } from '../config.js';
import { forwardingSettings } from './qgis-fcgi-pool.js';

describe('the public address nginx has QGIS Server advertise', () => {
  it('is sent as Forwarded and X-Forwarded-*, the port kept and the scheme without its colon', () => {
    assert.deepEqual(forwardingSettings('https://maps.example.org:8443/ows/'), [
      ['HTTP_FORWARDED', 'host=maps.example.org:8443;proto=https'],
      ['HTTP_X_FORWARDED_HOST', 'maps.example.org:8443'],
      ['HTTP_X_FORWARDED_PROTO', 'https'],
    ]);
  });

  it("is refused on another path than nginx's, which QGIS Server would advertise instead", () => {
    assert.throws(() => forwardingSettings('https://maps.example.org/qgis/'), ConfigError);
    assert.throws(() => forwardingSettings('https://maps.example.org/ows'), /must have the path \/ows\//);
  });
});
