import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SymbologyCatalogues } from '../qgis/symbology/catalogue.js';
import { AdministeredQgis } from './administered-qgis.js';

test('the plugin wins over the setting, the setting over the local binary, which is asked only without one', async () => {
  const catalogues = await SymbologyCatalogues.load();
  let asked = 0;
  const local = () => {
    asked += 1;
    return Promise.resolve('3.22.16-Białowieża');
  };
  const reported: string[] = [];
  const instances = { qgisVersions: () => reported };

  const withSetting = await AdministeredQgis.create(catalogues, { instances, setting: '3.40', local });
  assert.equal(asked, 0);
  assert.deepEqual(withSetting.version(), { version: '3.40', source: 'setting' });
  reported.push('3.44.15-Solothurn', '3.40.6-Bratislava');
  assert.deepEqual(withSetting.version(), { version: '3.40.6-Bratislava', source: 'plugin' });
  assert.equal(withSetting.symbology().catalogueVersion, '3.40');
  reported.length = 0;

  const withBinary = await AdministeredQgis.create(catalogues, { instances, local });
  assert.equal(asked, 1);
  const { version, source, catalogueVersion, match } = withBinary.symbology();
  assert.deepEqual(
    { version, source, catalogueVersion, match },
    {
      version: '3.22.16-Białowieża',
      source: 'local binary',
      catalogueVersion: '3.22',
      match: 'exact',
    },
  );

  const nothing = await AdministeredQgis.create(catalogues, { local: () => Promise.resolve(undefined) });
  assert.deepEqual(nothing.version(), { version: undefined, source: 'unknown' });
  assert.equal(nothing.symbology().match, 'newest');
});
