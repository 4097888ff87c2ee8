import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { SymbologyCatalogues } from '../qgis/symbology/catalogue.js';
import { AdministeredQgis } from './administered-qgis.js';

test('the setting wins over the instances, the instances over the local binary, asked only without a setting', async () => {
  const catalogues = await SymbologyCatalogues.load();
  let asked = 0;
  const local = () => {
    asked += 1;
    return Promise.resolve('3.22.16');
  };
  const reported: string[] = [];
  const instances = { qgisVersions: () => reported };

  const withSetting = await AdministeredQgis.create(catalogues, { instances, setting: '3.40', local });
  assert.equal(asked, 0);
  assert.deepEqual(withSetting.version(), { version: '3.40', source: 'setting' });
  reported.push('3.44.15', '3.22.16');
  assert.deepEqual(withSetting.version(), { version: '3.40', source: 'setting' }, 'instances never override it');

  const withBinary = await AdministeredQgis.create(catalogues, { instances, local });
  assert.equal(asked, 1);
  assert.deepEqual(withBinary.version(), { version: '3.22.16', source: 'plugin' }, 'the oldest instance');
  reported.length = 0;
  const { version, source, catalogueVersion, match } = withBinary.symbology();
  assert.deepEqual(
    { version, source, catalogueVersion, match },
    { version: '3.22.16', source: 'local binary', catalogueVersion: '3.22', match: 'exact' },
  );

  const nothing = await AdministeredQgis.create(catalogues, { local: () => Promise.resolve(undefined) });
  assert.deepEqual(nothing.version(), { version: undefined, source: 'unknown' });
  assert.equal(nothing.symbology().match, 'newest');
});
