import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, it } from '../../test/support/node-test.js';
import { scratchFolder } from '../../test/support/scratch.js';
import { canExchange, exchangeNames } from './rename-exchange.js';

const folder = scratchFolder('steward-exchange-');
/** scripts/run-tests.mjs runs the storage tests a second time with the addon left out. */
const withAddon = process.env['STEWARD_TEST_ADDON'] !== 'absent';

describe(`exchanging two names (${withAddon ? 'with' : 'without'} the addon)`, () => {
  it('is available when setup built the addon (without it large replaces write every version out)', () => {
    assert.equal(canExchange(), withAddon, 'native/build/rename-exchange.node: run scripts/build-native.sh');
  });

  it('swaps two files in one step, or reports false and changes nothing without the addon', async () => {
    const [first, second] = [join(folder, 'first'), join(folder, 'second')];
    writeFileSync(first, 'one');
    writeFileSync(second, 'two');
    assert.equal(await exchangeNames(first, second), withAddon);
    assert.equal(readFileSync(first, 'utf8'), withAddon ? 'two' : 'one');
    assert.equal(readFileSync(second, 'utf8'), withAddon ? 'one' : 'two');
  });

  it('reports false and changes nothing when the second name is free', async () => {
    const first = join(folder, 'alone');
    writeFileSync(first, 'one');
    assert.equal(await exchangeNames(first, join(folder, 'free')), false);
    assert.equal(readFileSync(first, 'utf8'), 'one');
  });

  it('rejects a failure that is not the file system declining (without the addon, tries nothing)', async () => {
    const first = join(folder, 'file');
    writeFileSync(first, 'one');
    const exchanging = exchangeNames(first, join(folder, 'file', 'below'));
    if (withAddon) await assert.rejects(exchanging, { code: 'ENOTDIR' });
    else assert.equal(await exchanging, false);
  });
});
