import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, it } from '../../test/support/node-test.js';
import { scratchFolder } from '../../test/support/scratch.js';
import { canExchange, exchangeNames } from './rename-exchange.js';

const folder = scratchFolder('steward-exchange-');

describe('exchanging two names', () => {
  it('is available: setup builds the addon, and without it large replaces write every version out', () => {
    assert.ok(canExchange(), 'native/build/rename-exchange.node is missing: run scripts/build-native.sh');
  });

  it('swaps two files in one step', async () => {
    const [first, second] = [join(folder, 'first'), join(folder, 'second')];
    writeFileSync(first, 'one');
    writeFileSync(second, 'two');
    assert.equal(await exchangeNames(first, second), true);
    assert.equal(readFileSync(first, 'utf8'), 'two');
    assert.equal(readFileSync(second, 'utf8'), 'one');
  });

  it('reports false and changes nothing when the second name is free', async () => {
    const first = join(folder, 'alone');
    writeFileSync(first, 'one');
    assert.equal(await exchangeNames(first, join(folder, 'free')), false);
    assert.equal(readFileSync(first, 'utf8'), 'one');
  });

  it('rejects a failure that is not the file system declining', async () => {
    const first = join(folder, 'file');
    writeFileSync(first, 'one');
    await assert.rejects(exchangeNames(first, join(folder, 'file', 'below')), { code: 'ENOTDIR' });
  });
});
