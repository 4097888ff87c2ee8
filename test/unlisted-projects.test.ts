import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

import { after, before, describe, it } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

interface Check {
  status: string;
  layers: unknown[];
  findings: Array<{ kind: string; message: string }>;
}

describe('project files outside <name>/<name>.qgs: told, with why and how to serve them', () => {
  let stack: Stack;
  const file = (...parts: string[]): string => join(stack.projectsDir, ...parts);

  before(async () => {
    stack = await startStack({}, {}, 'filesystem');
    assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'p' })).status, 201);
    const town = file('town', 'town.qgs');
    copyFileSync(town, file('loose.qgs'));
    mkdirSync(file('atlas'));
    copyFileSync(town, file('atlas', 'atlas-2019.qgs'));
    copyFileSync(town, file('town.qgs'));
    copyFileSync(town, file('town', 'town-backup.qgs'));
  });
  after(() => stack.stop());

  it('lists only the projects Steward serves', async () => {
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['town']);
  });

  it('reports each unlisted file in GET /api/checks as broken, saying why and how to serve it', async () => {
    const { status, body } = await stack.call('GET', '/api/checks');
    assert.equal(status, 200, JSON.stringify(body));
    const checks = body as Record<string, Check>;
    assert.deepEqual(Object.keys(checks).sort(), ['atlas/atlas-2019.qgs', 'loose.qgs', 'town', 'town.qgs']);
    assert.equal(checks['town']?.status, 'ok', JSON.stringify(checks['town']));
    const finding = (key: string): string => {
      const check = checks[key] as Check;
      assert.equal(check.status, 'broken');
      assert.deepEqual(check.layers, []);
      assert.equal(check.findings.length, 1);
      assert.equal(check.findings[0]?.kind, 'layout');
      return check.findings[0]?.message ?? '';
    };
    assert.match(
      finding('loose.qgs'),
      /beside the project folders.*move it to loose\/loose\.qgs to serve it as project "loose"/,
    );
    assert.match(finding('atlas/atlas-2019.qgs'), /folder "atlas" holds no atlas\.qgs.*move it to atlas\/atlas\.qgs/);
    assert.match(
      finding('town.qgs'),
      /project "town" is served already: move it to <name>\/<name>\.qgs under another name/,
    );
  });

  it('answers a request for such a name with a JSON 404 that names the file and the layout', async () => {
    for (const [path, named] of [
      ['/api/projects/loose', 'loose.qgs'],
      ['/api/projects/atlas/check', 'atlas/atlas-2019.qgs'],
      ['/api/projects/atlas/layers', 'atlas/atlas-2019.qgs'],
    ] as const) {
      const { status, body } = await stack.call('GET', path);
      assert.equal(status, 404, path);
      const { error } = body as { error: string };
      assert.ok(error.includes(named), `${path}: ${error}`);
      assert.match(error, /serves a project from \w+\/\w+\.qgs \(or \.qgz\).*move it there to serve it/);
    }
    assert.equal((await stack.call('GET', '/api/projects/nowhere')).status, 404);
  });

  it('answers the creation of a project whose folder holds another file with a 409 that names it', async () => {
    const { status, body } = await stack.call('POST', '/api/projects', { name: 'atlas', author: 'p' });
    assert.equal(status, 409, JSON.stringify(body));
    assert.match(
      (body as { error: string }).error,
      /folder "atlas" already, without atlas\.qgs.*atlas\/atlas-2019\.qgs/,
    );
  });

  it('serves a file moved as it is told, and reports it no longer', async () => {
    renameSync(file('atlas', 'atlas-2019.qgs'), file('atlas', 'atlas.qgs'));
    mkdirSync(file('loose'));
    renameSync(file('loose.qgs'), file('loose', 'loose.qgs'));
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['atlas', 'loose', 'town']);
    const checks = (await stack.call('GET', '/api/checks')).body as Record<string, Check>;
    assert.deepEqual(Object.keys(checks).sort(), ['atlas', 'loose', 'town', 'town.qgs']);
    assert.equal(checks['atlas']?.status, 'ok', JSON.stringify(checks['atlas']));
    const capabilities = await fetch(`${stack.api.url}/api/projects/atlas/layers`);
    assert.equal(capabilities.status, 200);
  });
});
