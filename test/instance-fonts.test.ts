/**
 * Fonts are those of the QGIS Server instances, not of Steward's machine: two real instances run
 * with fontconfig setups of their own (one with DejaVu Sans only, one with DejaVu Sans and Serif)
 * and report their fonts through the plugin. A style upload warns of a font no instance has, even
 * one Steward's machine has; a project check names the instances that lack a font. Before any
 * instance is connected, Steward's own fonts stand in and the messages say so.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { zipSync } from 'fflate';

import { type ProjectCheck } from '../src/insight/checks.js';
import { type InstanceAbout } from '../src/monitor/protocol.js';
import { installedFontFamilies } from '../src/runtime/fonts.js';
import { freePort } from '../src/runtime/ports.js';
import { type QgisServerProcess } from '../src/runtime/qgis-server.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { labelledCircleQml } from './support/point-style.js';
import { startTestQgis } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const DEJAVU = '/usr/share/fonts/truetype/dejavu';
const MISSING_FONT = 'Steward Nowhere Sans';

/** A fontconfig setup that sees only `fonts` (files of DejaVu's folder), in a folder of its own. */
function fontconfig(dir: string, fonts: string[]): string {
  const fontDir = join(dir, 'fonts');
  mkdirSync(fontDir, { recursive: true });
  for (const font of fonts) copyFileSync(join(DEJAVU, font), join(fontDir, font));
  const file = join(dir, 'fonts.conf');
  writeFileSync(
    file,
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig><dir>${fontDir}</dir><cachedir>${join(dir, 'cache')}</cachedir></fontconfig>\n`,
  );
  return file;
}

describe('fonts of the QGIS Server instances', () => {
  let data: Fixtures;
  let workDir = '';
  let stack: Stack;
  let monitoringPort = 0;
  const instances: QgisServerProcess[] = [];
  const project = '/api/projects/lettering';
  let sansOnly = '';
  let sansAndSerif = '';

  const upload = async (style: string, family: string): Promise<{ status: number; warnings: string[] }> => {
    const response = await fetch(`${stack.api.url}${project}/styles/${style}/package`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: zipSync({ [`${style}.qml`]: new TextEncoder().encode(labelledCircleQml(family)) }),
    });
    const body = (await response.json()) as { warnings: string[] };
    return { status: response.status, warnings: body.warnings };
  };
  const fontFindings = async (): Promise<string[]> => {
    const { status, body } = await stack.call('GET', `${project}/check`);
    assert.equal(status, 200, JSON.stringify(body));
    const points = (body as ProjectCheck).layers.find(({ name }) => name === 'points');
    return (points?.findings ?? []).filter(({ kind }) => kind === 'font').map(({ message }) => message);
  };

  /** Starts an instance with the plugin that sees the fonts of `fontconfigFile`; answers its id. */
  async function startInstance(fontconfigFile: string): Promise<string> {
    const before = new Set(((await stack.call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers);
    const known = new Set([...before].map(({ id }) => id));
    instances.push(
      await startTestQgis({
        env: {
          QGIS_PLUGINPATH: join(repo, 'plugin'),
          STEWARD_HOST: '127.0.0.1',
          STEWARD_PORT: String(monitoringPort),
          FONTCONFIG_FILE: fontconfigFile,
        },
      }),
    );
    return waitFor(
      'the instance to register',
      async () =>
        ((await stack.call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers.find(
          ({ id }) => !known.has(id),
        )?.id,
      20_000,
    );
  }

  before(async () => {
    data = makeFixtures();
    workDir = mkdtempSync(join(tmpdir(), 'steward-fonts-'));
    monitoringPort = await freePort();
    stack = await startStack({ monitoringPort });
    assert.equal((await stack.call('POST', '/api/projects', { name: 'lettering', author: 'fonts' })).status, 201);
    const layer = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    assert.equal((await stack.call('POST', `${project}/layers`, layer)).status, 201);
  });

  after(async () => {
    for (const instance of instances) await instance.stop();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  it("looks at Steward's machine while no instance is connected, and says so", async () => {
    const local = await installedFontFamilies();
    assert.ok(local.has('dejavu sans mono') && !local.has(MISSING_FONT.toLowerCase()));
    assert.deepEqual(await upload('mono', 'DejaVu Sans Mono'), { status: 201, warnings: [] });
    const missing = await upload('missing', MISSING_FONT);
    assert.equal(missing.status, 201);
    assert.deepEqual(missing.warnings, [
      `font "${MISSING_FONT}" is not installed on Steward's machine (no QGIS Server instance is connected, so its fonts were looked at); QGIS Server draws its text with another font`,
    ]);
  });

  it('warns of a font no instance has and checks name the instances that lack one', async () => {
    sansOnly = await startInstance(fontconfig(join(workDir, 'sans'), ['DejaVuSans.ttf']));
    sansAndSerif = await startInstance(fontconfig(join(workDir, 'serif'), ['DejaVuSans.ttf', 'DejaVuSerif.ttf']));
    const fonts = async (id: string) =>
      ((await stack.call('GET', `/api/instances/${id}/about`)).body as InstanceAbout).fonts;
    const [first, second] = [await fonts(sansOnly), await fonts(sansAndSerif)];
    assert.ok(first.includes('DejaVu Sans') && !first.includes('DejaVu Serif'), first.join(', '));
    assert.ok(second.includes('DejaVu Serif') && !second.includes('DejaVu Sans Mono'), second.join(', '));

    assert.deepEqual(await upload('serif', 'DejaVu Serif'), { status: 201, warnings: [] }, 'one instance has it');
    const mono = await upload('mono', 'DejaVu Sans Mono');
    assert.equal(mono.status, 200);
    assert.equal(mono.warnings.length, 1, "Steward's machine has it, no instance does");
    assert.match(mono.warnings[0] ?? '', /^font "DejaVu Sans Mono" is installed on no QGIS Server instance \(/);
    for (const id of [sansOnly, sansAndSerif]) assert.ok(mono.warnings[0]?.includes(id), mono.warnings[0]);

    for (const style of ['serif', 'mono']) {
      const applied = await stack.call('POST', `${project}/layers/points/style`, { name: style, current: true });
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
    }
    const findings = await fontFindings();
    assert.equal(findings.length, 2, findings.join('; '));
    assert.ok(
      findings.includes(
        `font "DejaVu Serif" is not installed on QGIS Server instance ${sansOnly}, which draws its text with another font`,
      ),
      findings.join('; '),
    );
    const monoFinding = findings.find((finding) => finding.startsWith('font "DejaVu Sans Mono" is installed on no'));
    assert.ok(monoFinding?.includes(sansOnly) && monoFinding.includes(sansAndSerif), findings.join('; '));
  });

  it('finds no font missing once the style uses one every instance has', async () => {
    assert.deepEqual(await upload('serif', 'DejaVu Sans'), { status: 200, warnings: [] });
    assert.deepEqual(await upload('mono', 'DejaVu Sans'), { status: 200, warnings: [] });
    assert.deepEqual(await fontFindings(), []);
  });
});
