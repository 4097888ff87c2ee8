import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { ProjectDocument } from './project.js';

const layer = (id: string, name: string, inside = ''): string => `
    <maplayer type="vector" geometry="Point" wkbType="Point">
      <id>${id}</id>
      <datasource>/data/v.gpkg|layername=${name}</datasource>
      <layername>${name}</layername>
      <provider encoding="UTF-8">ogr</provider>${inside}
      <fieldConfiguration>
        <field name="fid" configurationFlags="None"/>
        <field name="name" configurationFlags="None"/>
      </fieldConfiguration>
    </maplayer>`;

const PROJECT = `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16">
  <layer-tree-group>
    <layer-tree-layer id="zones_1" name="zones"/>
    <layer-tree-layer id="roads_1" name="roads"/>
    <layer-tree-layer id="towns_1" name="towns"/>
    <custom-order enabled="0">
      <item>zones_1</item>
      <item>roads_1</item>
      <item>towns_1</item>
    </custom-order>
  </layer-tree-group>
  <snapping-settings mode="3" enabled="1">
    <individual-layer-settings>
      <layer-setting id="zones_1" enabled="1"/>
      <layer-setting id="roads_1" enabled="1"/>
    </individual-layer-settings>
  </snapping-settings>
  <relations>
    <relation id="towns_in_zones" referencingLayer="towns_1" referencedLayer="zones_1" strength="Association"/>
    <relation id="towns_on_roads" referencingLayer="towns_1" referencedLayer="roads_1" strength="Association"/>
  </relations>
  <projectlayers>${layer('zones_1', 'zones')}${layer(
    'roads_1',
    'roads',
    `
      <vectorjoins>
        <join joinLayerId="zones_1" joinFieldName="name" targetFieldName="name" hasCustomPrefix="1" customPrefix="zone_"/>
      </vectorjoins>
      <aliases>
        <alias field="name" index="1" name=""/>
        <alias field="zone_fid" index="2" name=""/>
      </aliases>`,
  )}${layer(
    'towns_1',
    'towns',
    `
      <referencedLayers>
        <relation id="towns_in_zones" referencedLayer="zones_1" referencingLayer="towns_1"/>
        <relation id="towns_on_roads" referencedLayer="roads_1" referencingLayer="towns_1"/>
      </referencedLayers>`,
  )}
  </projectlayers>
  <layerorder>
    <layer id="zones_1"/>
    <layer id="roads_1"/>
    <layer id="towns_1"/>
  </layerorder>
  <visibility-presets>
    <visibility-preset name="all">
      <layer id="zones_1" visible="1" style="default" expanded="1"/>
      <expanded-legend-nodes id="zones_1"/>
      <layer id="towns_1" visible="1" style="default" expanded="1"/>
    </visibility-preset>
  </visibility-presets>
  <Layouts>
    <Layout name="page">
      <LayoutItem type="65639">
        <LayerSet>
          <Layer name="zones" source="/data/v.gpkg|layername=zones" provider="ogr">zones_1</Layer>
          <Layer name="towns" source="/data/v.gpkg|layername=towns" provider="ogr">towns_1</Layer>
        </LayerSet>
      </LayoutItem>
      <LayoutItem type="65642">
        <layer-tree-group>
          <layer-tree-layer id="zones_1" name="zones" providerKey="ogr" source="/data/v.gpkg|layername=zones"/>
          <custom-order enabled="0">
            <item>zones_1</item>
          </custom-order>
        </layer-tree-group>
      </LayoutItem>
      <Atlas coverageLayer="zones_1" coverageLayerName="zones" coverageLayerSource="/data/v.gpkg|layername=zones" coverageLayerProvider="ogr" enabled="1"/>
    </Layout>
  </Layouts>
</qgis>
`;

describe('removing a layer', () => {
  it('drops what QGIS drops with it, and leaves layers that do not name it as they were', () => {
    const document = ProjectDocument.parse(PROJECT);
    const towns = /<maplayer[^]*?<layername>towns[^]*?<\/maplayer>/.exec(PROJECT)?.[0] ?? '';
    assert.ok(document.removeLayer('roads'));
    const text = document.serialize();
    assert.doesNotMatch(text, /roads_1/, 'roads is named nowhere any more');
    assert.match(text, /<relation id="towns_in_zones"[^>]*\/>\s*<\/relations>/);
    assert.ok(text.includes('<referencedLayers>\n        <relation id="towns_in_zones"'));

    assert.ok(document.removeLayer('zones'));
    const after = document.serialize();
    assert.equal((after.match(/zones_1/g) ?? []).length, 1, 'only the legend node keeps the id');
    assert.match(after, /<layer-tree-layer id="zones_1" name="zones"\/>/);
    assert.match(after, /<relations\/>|<relations>\s*<\/relations>/);
    assert.match(after, /<Atlas coverageLayer="" enabled="0"\/>/);
    assert.match(after, /<LayerSet>\s*<Layer name="towns"[^>]*>towns_1<\/Layer>\s*<\/LayerSet>/);
    assert.ok(!after.includes(towns), 'towns changed: its relations went');
    assert.deepEqual(
      document.layers().map((entry) => entry.name),
      ['towns'],
    );
  });

  it('drops the fields a join added with the join', () => {
    const document = ProjectDocument.parse(PROJECT);
    assert.ok(document.removeLayer('zones'));
    const text = document.serialize();
    assert.doesNotMatch(text, /<join |zone_fid/);
    assert.match(text, /<alias field="name" index="1" name=""\/>/);
  });

  it('keeps the layers that do not name it as their text', () => {
    const document = ProjectDocument.parse(PROJECT);
    const untouched = PROJECT.match(/<maplayer[^]*?<\/maplayer>/g)?.slice(0, 2) ?? [];
    assert.ok(document.removeLayer('towns'));
    const text = document.serialize();
    for (const layer of untouched) assert.ok(text.includes(layer));
    assert.doesNotMatch(text, /towns_/);
  });
});
