import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { unzipSync } from 'fflate';

import { freePort } from '../src/runtime/ports.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, pixelsOf } from './support/png.js';
import { squareSvg, stylePackage, svgMarkerQml as svgMarker } from './support/point-style.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Stack, startStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');

/** The colour of the package's SVG marker, and of another package's. */
const MARKER = [0, 200, 0];
const OTHER = [0, 0, 200];
const MARKER_SVG = squareSvg(MARKER);
const OTHER_SVG = squareSvg(OTHER);
/** The name a package's image is kept under. */
const keptName = (svg: string): string => `${createHash('sha256').update(svg).digest('hex')}.svg`;
const MISSING_FONT = 'Steward Nonexistent Sans';

const svgMarkerQml = (svgPath: string): string => svgMarker(svgPath, MISSING_FONT);

/** PUT of a package to `<api><project>/styles/<style>/package<query>`. */
async function putPackage(
  target: { api: string; project: string; query?: string },
  style: string,
  body: Buffer,
  type = 'application/zip',
): Promise<Response> {
  return fetch(`${target.api}${target.project}/styles/${style}/package${target.query ?? ''}`, {
    method: 'PUT',
    headers: { 'content-type': type },
    body: new Uint8Array(body),
  });
}

/** The pixels of the package's marker colour (or `colour`) in a map answered by `url`. */
async function markerPixels(url: string, colour = MARKER): Promise<number> {
  const map = await fetch(url);
  assert.equal(map.status, 200);
  return pixelsOf(decodePng(Buffer.from(await map.arrayBuffer())), colour);
}

/** PUT of a QML document to `<api><project>/styles/<style>/qml<query>`. */
async function putQml(target: { api: string; project: string; query?: string }, style: string, qml: string) {
  return fetch(`${target.api}${target.project}/styles/${style}/qml${target.query ?? ''}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/xml' },
    body: qml,
  });
}

describe('style packages: a QML with the images it draws with', () => {
  let stack: Stack;
  let data: Fixtures;
  const project = '/api/projects/pack';
  const put = async (style: string, body: Buffer, type = 'application/zip'): Promise<Response> =>
    putPackage({ api: stack.api.url, project }, style, body, type);
  const error = async (response: Response): Promise<string> => ((await response.json()) as { error: string }).error;

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'pack', author: 'test' });
    const layer = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    assert.equal((await stack.call('POST', `${project}/layers`, layer)).status, 201);
  });
  after(async () => {
    await stack.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('keeps the SVG with the project and draws the marker, not QGIS\'s "?"', async () => {
    const body = stylePackage({
      'trees/trees.qml': svgMarkerQml('C:\\Users\\me\\icons\\tree.svg'),
      'trees/icons/tree.svg': MARKER_SVG,
      'trees/notes.txt': 'not an image',
      // What macOS's Finder adds when it zips a folder.
      '__MACOSX/trees/._trees.qml': 'resource fork',
      'trees/.DS_Store': 'folder settings',
    });
    const response = await put('trees', body);
    assert.equal(response.status, 201);
    const answer = (await response.json()) as { created: boolean; images: string[]; warnings: string[] };
    assert.deepEqual(answer.images, ['trees/icons/tree.svg']);
    assert.ok(
      answer.warnings.some((warning) => warning.includes(`"${MISSING_FONT}"`)),
      answer.warnings.join('; '),
    );
    assert.ok(
      answer.warnings.some((warning) => warning.includes('trees/notes.txt')),
      answer.warnings.join('; '),
    );
    assert.equal(answer.warnings.length, 2, 'files the system added are left without a word');
    const imagesDir = join(stack.projectsDir, 'pack', 'images', 'trees');
    const [kept] = readdirSync(imagesDir);
    assert.equal(readFileSync(join(imagesDir, kept ?? ''), 'utf8'), MARKER_SVG);
    const qml = await (await fetch(`${stack.api.url}${project}/styles/trees/qml`)).text();
    assert.ok(qml.includes(`value="${join(imagesDir, kept ?? '')}"`), 'the style names the kept SVG');
    assert.ok(!qml.includes('tree.svg'), 'the path of QGIS Desktop is gone');

    const apply = await stack.call('POST', `${project}/layers/points/style`, { name: 'trees', current: true });
    assert.equal(apply.status, 200);
    const drawn = await markerPixels(`${stack.api.url}${project}/layers/points/map`);
    // Three points, each a square of the marker's colour, where a missing SVG draws a grey "?".
    assert.ok(drawn > 1000, `the SVG marker is drawn in its colour (${drawn} pixels)`);

    assert.equal((await put('trees', body)).status, 200, 'a package replaces its style');
  });

  it('refuses a style naming an image that is neither in the package nor on the server, with its name', async () => {
    const response = await put('lost', stylePackage({ 'lost.qml': svgMarkerQml('/home/me/icons/lost-tree.svg') }));
    assert.equal(response.status, 422);
    assert.match(await error(response), /\/home\/me\/icons\/lost-tree\.svg/);
    assert.equal((await stack.call('GET', `${project}/styles`)).body instanceof Array, true);
    assert.ok(!((await stack.call('GET', `${project}/styles`)).body as string[]).includes('lost'));
    assert.ok(!existsSync(join(stack.projectsDir, 'pack', 'images', 'lost')));
    const builtIn = await put('plane', stylePackage({ 'plane.qml': svgMarkerQml('gpsicons/plane.svg') }));
    assert.equal(builtIn.status, 201, "an SVG of QGIS's own library is found on the server");
  });

  it('refuses path traversal, zip bombs, damaged archives and other types with 400 or 415', async () => {
    const qml = svgMarkerQml('icons/tree.svg');
    const bodies: Array<[string, Buffer, RegExp]> = [
      [
        'parent',
        stylePackage({ 'a.qml': qml, '../icons/tree.svg': MARKER_SVG }),
        /"\.\.\/icons\/tree\.svg" would leave/,
      ],
      ['absolute', stylePackage({ 'a.qml': qml, '/etc/icons/tree.svg': MARKER_SVG }), /would leave/],
      ['backslash', stylePackage({ 'a.qml': qml, '..\\icons\\tree.svg': MARKER_SVG }), /would leave/],
      ['bomb', stylePackage({ 'a.qml': qml, 'icons/tree.svg': new Uint8Array(80 * 1024 * 1024) }), /more than/],
      ['no qml', stylePackage({ 'icons/tree.svg': MARKER_SVG }), /exactly one \.qml/],
      ['two qml', stylePackage({ 'a.qml': qml, 'b.qml': qml }), /exactly one \.qml/],
      ['not qgis', stylePackage({ 'a.qml': '<sld/>' }), /not a QGIS style/],
      ['not zip', Buffer.from('hello'), /not a zip archive/],
      ['cut', stylePackage({ 'a.qml': qml }).subarray(0, 60), /not a zip archive/],
    ];
    for (const [what, body, reason] of bodies) {
      const response = await put('refused', body);
      assert.equal(response.status, 400, what);
      assert.match(await error(response), reason, what);
    }
    // An entry that claims 10 bytes and inflates to a mebibyte stops at its claim.
    const lying = stylePackage({ 'a.qml': qml, 'icons/tree.svg': new Uint8Array(1024 * 1024) });
    const directoryEntry = lying.lastIndexOf(Buffer.from('icons/tree.svg')) - 46;
    assert.equal(lying.readUInt32LE(directoryEntry), 0x02014b50);
    lying.writeUInt32LE(10, directoryEntry + 24);
    const liar = await put('refused', lying);
    assert.equal(liar.status, 400);
    assert.match(await error(liar), /does not unpack to the 10 bytes it declares/);
    assert.equal((await put('refused', stylePackage({ 'a.qml': qml }), 'application/xml')).status, 415);
    assert.ok(!((await stack.call('GET', `${project}/styles`)).body as string[]).includes('refused'));
    assert.ok(!existsSync(join(stack.projectsDir, 'icons')));
  });

  it('removes the kept images with their style', async () => {
    assert.equal(
      (await stack.call('POST', `${project}/layers/points/style`, { name: 'default', current: true })).status,
      200,
    );
    assert.equal((await stack.call('DELETE', `${project}/styles/trees`)).status, 200);
    assert.ok(!existsSync(join(stack.projectsDir, 'pack', 'images', 'trees')));
  });

  it("checks the images of a QML upload as a package's, and answers its font warnings the same way", async () => {
    const target = { api: stack.api.url, project };
    const lostQml = await putQml(target, 'lost', svgMarkerQml('/home/me/icons/lost-tree.svg'));
    const lostPackage = await put('lost', stylePackage({ 'lost.qml': svgMarkerQml('/home/me/icons/lost-tree.svg') }));
    assert.equal(lostQml.status, 422);
    const [qmlError, packageError] = [await lostQml.json(), await lostPackage.json()] as Array<{ error: string }>;
    assert.deepEqual(Object.keys(qmlError ?? {}), Object.keys(packageError ?? {}), 'the same error shape');
    assert.match(
      qmlError?.error ?? '',
      /images that are neither with the project nor on the server: \/home\/me\/icons\/lost-tree\.svg$/,
    );
    assert.ok(!((await stack.call('GET', `${project}/styles`)).body as string[]).includes('lost'));

    // The pool's instances, registered through the plugin, are asked for their fonts.
    const servers = ((await stack.call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers;
    const ids = servers.map(({ id }) => id);
    const fontWarning = `font "${MISSING_FONT}" is installed on no QGIS Server instance (${ids.join(', ')}); QGIS Server draws its text with another font`;
    const library = await putQml(target, 'found', svgMarkerQml('gpsicons/plane.svg'));
    assert.equal(library.status, 201, "an SVG of QGIS's own library is on the server");
    assert.deepEqual(await library.json(), { created: true, warnings: [fontWarning] });
    const absolute = await putQml(target, 'found', svgMarkerQml('/usr/share/qgis/svg/gpsicons/plane.svg'));
    assert.equal(absolute.status, 200, 'an absolute path on the server');
    assert.deepEqual(await absolute.json(), { created: false, warnings: [fontWarning] });
    const beside = join(stack.projectsDir, 'pack', 'symbols');
    mkdirSync(beside);
    writeFileSync(join(beside, 'mine.svg'), MARKER_SVG);
    assert.equal((await putQml(target, 'found', svgMarkerQml('symbols/mine.svg'))).status, 200, 'beside the project');
    rmSync(beside, { recursive: true });
  });

  it('replacing a package removes the images only the old one drew with, not those another style names', async () => {
    const imagesDir = join(stack.projectsDir, 'pack', 'images', 'swap');
    const first = await put('swap', stylePackage({ 'swap.qml': svgMarkerQml('/home/me/a.svg'), 'a.svg': MARKER_SVG }));
    assert.equal(first.status, 201);
    assert.deepEqual(readdirSync(imagesDir), [keptName(MARKER_SVG)]);
    // The style as Steward gives it, uploaded as another style: it names the kept a.svg.
    const copy = await (await fetch(`${stack.api.url}${project}/styles/swap/qml`)).text();
    assert.equal((await putQml({ api: stack.api.url, project }, 'copy', copy)).status, 201);

    const second = await put('swap', stylePackage({ 'swap.qml': svgMarkerQml('/home/me/b.svg'), 'b.svg': OTHER_SVG }));
    assert.equal(second.status, 200);
    assert.deepEqual(readdirSync(imagesDir).sort(), [keptName(MARKER_SVG), keptName(OTHER_SVG)].sort());
    assert.equal((await stack.call('DELETE', `${project}/styles/copy`)).status, 200);
    assert.deepEqual(readdirSync(imagesDir), [keptName(OTHER_SVG)], 'a.svg went with the last style naming it');

    const apply = await stack.call('POST', `${project}/layers/points/style`, { name: 'swap', current: true });
    assert.equal(apply.status, 200);
    const url = `${stack.api.url}${project}/layers/points/map`;
    assert.ok((await markerPixels(url, OTHER)) > 1000, 'b.svg is drawn');
    assert.equal(await markerPixels(url, MARKER), 0, 'a.svg is not');
  });
});

describe('style packages of a project stored in PostgreSQL', () => {
  let db: TestDatabase;
  let stack: Stack;
  let data: Fixtures;
  const project = '/api/projects/packed';
  const query = '?schema=styled';

  before(async () => {
    db = await startTestDatabase();
    data = makeFixtures();
    // QGIS Server keeps a database project cached until its plugin is told the project changed.
    const monitoringPort = await freePort();
    const plugin = {
      QGIS_PLUGINPATH: join(repo, 'plugin'),
      STEWARD_HOST: '127.0.0.1',
      STEWARD_PORT: `${monitoringPort}`,
    };
    stack = await startStack({ psqlService: db.service, monitoringPort }, { env: plugin });
    await waitFor(
      'the instance to register',
      async () => ((await stack.call('GET', '/api/instances')).body as { servers: unknown[] }).servers.length > 0,
      20_000,
    );
    const created = await stack.call('POST', '/api/projects/', { name: 'packed', author: 'test', schema: 'styled' });
    assert.equal(created.status, 201);
    const layer = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    assert.equal((await stack.call('POST', `${project}/layers${query}`, layer)).status, 201);
  });
  after(async () => {
    await stack?.stop();
    await db?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('embeds the images in the style, which QGIS Server draws, and keeps no file of them', async () => {
    const body = stylePackage({ 'trees.qml': svgMarkerQml('/home/me/tree.svg'), 'tree.svg': MARKER_SVG });
    const response = await putPackage({ api: stack.api.url, project, query }, 'trees', body);
    assert.equal(response.status, 201, await response.clone().text());
    const qml = await (await fetch(`${stack.api.url}${project}/styles/trees/qml${query}`)).text();
    const embedded = `base64:${Buffer.from(MARKER_SVG).toString('base64')}`;
    assert.ok(qml.includes(`value="${embedded}"`), 'the style holds the SVG itself');
    const [row] = await db.sql<{ qml: string }>(`SELECT qml FROM styled.steward_styles WHERE name = 'trees'`);
    assert.equal(row?.qml, qml, 'as stored in the database');
    assert.ok(!existsSync(join(stack.projectsDir, 'steward')), 'nothing in the projects folder');
    const apply = await stack.call('POST', `${project}/layers/points/style${query}`, { name: 'trees', current: true });
    assert.equal(apply.status, 200);
    const drawn = await markerPixels(`${stack.api.url}${project}/layers/points/map${query}`);
    assert.ok(drawn > 1000, `the SVG marker is drawn in its colour (${drawn} pixels)`);
  });

  it('replacing the package draws the new image, and the old one is nowhere', async () => {
    const body = stylePackage({ 'trees.qml': svgMarkerQml('/home/me/other.svg'), 'other.svg': OTHER_SVG });
    const response = await putPackage({ api: stack.api.url, project, query }, 'trees', body);
    assert.equal(response.status, 200, await response.clone().text());
    const url = `${stack.api.url}${project}/layers/points/map${query}`;
    assert.ok((await markerPixels(url, OTHER)) > 1000, 'the new SVG is drawn');
    assert.equal(await markerPixels(url, MARKER), 0, 'the old one is not');
    const [stored] = await db.sql<{ content: Buffer }>(`SELECT content FROM styled.qgis_projects`);
    const document = unzipSync(new Uint8Array(stored?.content ?? Buffer.alloc(0)))['packed.qgs'] ?? new Uint8Array();
    const text = Buffer.from(document).toString('utf8');
    assert.ok(text.includes(Buffer.from(OTHER_SVG).toString('base64')), 'the layer holds the new image');
    assert.ok(!text.includes(Buffer.from(MARKER_SVG).toString('base64')), 'and no longer the old one');
  });
});
