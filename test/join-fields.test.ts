/**
 * A layer that joins another layer's fields, as QGIS Desktop writes the join (PyQGIS): the fields
 * route lists the joined fields as QGIS names them, and a style or a datasource repair that reads
 * them is not refused as if they were missing.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { after, before, describe, it } from './support/node-test.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack } from './support/stack.js';

describe("a layer's joined fields, as QGIS names them", () => {
  let stack: Stack;
  let qgisFields: string[];
  let folder: string;

  before(async () => {
    stack = await startStack();
    folder = join(stack.projectsDir, 'joined');
    mkdirSync(folder);
    qgisFields = JSON.parse(runPyqgisScript('write_joined_project.py', join(folder, 'joined.qgs'))) as string[];
    assert.deepEqual(qgisFields, ['fid', 'code', 'facts_fid', 'facts_owner', 'facts_rating', 'r_rating']);
  });
  after(async () => {
    await stack?.stop();
  });

  it('lists the fields QGIS gives the layer, the joined ones typed as their source has them', async () => {
    const { status, body } = await stack.call('GET', '/api/projects/joined/layers/zones/fields');
    assert.equal(status, 200, JSON.stringify(body));
    const fields = body as Array<{ name: string; type: string }>;
    assert.deepEqual(
      fields.map((field) => field.name),
      qgisFields,
    );
    assert.deepEqual(
      fields.filter((field) => field.name.includes('_')).map((field) => field.type),
      ['integer', 'string', 'real', 'real'],
    );
  });

  it("repairs the layer's source without calling the joined field its style reads missing", async () => {
    const moved = join(folder, 'moved.gpkg');
    copyFileSync(join(folder, 'joined.gpkg'), moved);
    const { status, body } = await stack.call('PATCH', '/api/projects/joined/layers/zones', {
      datasource: `${moved}|layername=zones`,
    });
    assert.equal(status, 200, JSON.stringify(body));
    const info = (await stack.call('GET', '/api/projects/joined/layers/zones')).body as { source: string };
    assert.match(info.source, /moved\.gpkg/);
  });

  it('takes a QML whose rules read joined fields, and refuses one reading a field no join adds', async () => {
    const qml = (field: string): string =>
      `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'><qgis version="3.22.0" styleCategories="Symbology">` +
      `<renderer-v2 type="RuleRenderer" symbollevels="0" enableorderby="0" forceraster="0"><rules key="root">` +
      `<rule key="a" symbol="0" filter="&quot;${field}&quot; > 0.6"/></rules><symbols>` +
      `<symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0"><layer class="SimpleFill" enabled="1" locked="0" pass="0">` +
      `<Option type="Map"><Option type="QString" name="color" value="200,30,30,255"/></Option></layer></symbol></symbols></renderer-v2></qgis>`;
    const put = (style: string, field: string) =>
      fetch(`${stack.api.url}/api/projects/joined/styles/${style}/qml?layer=zones`, {
        method: 'PUT',
        headers: { 'content-type': 'application/xml' },
        body: qml(field),
      }).then(async (response) => ({ status: response.status, body: await response.text() }));
    const joined = await put('rated', 'r_rating');
    assert.equal(joined.status, 201, joined.body);
    const missing = await put('owned', 'r_owner');
    assert.equal(missing.status, 422, missing.body);
    const refusal = JSON.parse(missing.body) as { error: string; code: string };
    assert.equal(refusal.code, 'fields_missing');
    assert.match(refusal.error, /has no field "r_owner"/);
  });
});
