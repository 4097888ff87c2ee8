import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

import { installedFontFamilies } from '../src/runtime/fonts.js';
import { describe, it } from './support/node-test.js';

describe('installedFontFamilies (fontconfig of this machine)', () => {
  it('counts a name the configuration maps to an installed font as there, and an unknown name as not', async () => {
    const sans = execFileSync('fc-match', ['-f', '%{family[0]}', 'Sans'], { encoding: 'utf8' });
    const families = await installedFontFamilies(['Sans', 'No Such Family 7f3a', 'DejaVu Sans']);
    assert.ok(families.has(sans.toLowerCase()), `${sans} is installed`);
    assert.ok(families.has('sans'), `"Sans" is drawn with ${sans}, fontconfig's choice for it`);
    assert.ok(!families.has('no such family 7f3a'));
    assert.ok(families.has('dejavu sans'));
  });
});
