import assert from 'node:assert/strict';
import { createServer } from 'node:net';

import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { describe, it } from './support/node-test.js';

describe('starting qgis_mapserver', () => {
  it('fails when another process listens on its port, rather than taking that process for it', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const address = other.address();
    assert.ok(address && typeof address === 'object');
    try {
      await assert.rejects(QgisServerProcess.start({ port: address.port }), /already in use/);
    } finally {
      other.close();
    }
  });
});
