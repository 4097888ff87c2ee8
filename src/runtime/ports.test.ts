import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { freePort } from './ports.js';

describe('freePort', () => {
  it('never hands out a port twice, though none of them is bound yet', async () => {
    // 500 draws from some 12,800 ports would repeat one with a chance above 99.9%.
    const ports: number[] = [];
    for (let draw = 0; draw < 500; draw += 1) ports.push(await freePort());
    assert.equal(new Set(ports).size, ports.length);
  });
});
