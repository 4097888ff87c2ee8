import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { decodeChain, decodeEachOfChain, encodeDelta, encodeKeyframe } from './version-codec.js';
import { type VersionContent } from './version-store.js';

describe('decodeEachOfChain', () => {
  it('gives every version of a chain in turn, the last as decodeChain gives it', async () => {
    const keyframe = Buffer.from('<qgis><layer>roads</layer></qgis>');
    const version = (id: number, payload: Buffer): VersionContent => ({
      id,
      identity: `identity-${id}`,
      keyframe: id === 1,
      payload,
      layers: undefined,
    });
    const chain = [
      version(1, await encodeKeyframe([keyframe])),
      // <qgis><layer>roads</layer><layer>rivers</layer></qgis>
      version(
        2,
        encodeDelta([
          { kind: 'copy', offset: 0, length: 26 },
          { kind: 'bytes', bytes: Buffer.from('<layer>rivers</layer>') },
          { kind: 'copy', offset: 26, length: 7 },
        ]),
      ),
      // <qgis><layer>rivers</layer></qgis>
      version(
        3,
        encodeDelta([
          { kind: 'copy', offset: 0, length: 6 },
          { kind: 'copy', offset: 26, length: 28 },
        ]),
      ),
    ];
    const texts = [...decodeEachOfChain('test', chain)].map((content) => content.toString('utf8'));
    assert.deepEqual(texts, [
      '<qgis><layer>roads</layer></qgis>',
      '<qgis><layer>roads</layer><layer>rivers</layer></qgis>',
      '<qgis><layer>rivers</layer></qgis>',
    ]);
    assert.equal(decodeChain('test', chain).toString('utf8'), texts.at(-1));
  });
});
