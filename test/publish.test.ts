/**
 * Publishing from QGIS Desktop: a project made by PyQGIS beside a GeoPackage and a GeoTIFF made by
 * GDAL is uploaded as a bundle, drawn by QGIS Server through Steward as PyQGIS draws the original,
 * and taken back to Desktop (a .qgz, a bundle with its data) that PyQGIS opens with every layer
 * valid. Replacing, broken layers and bad uploads each get their status and leave nothing behind.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { type Worker } from 'node:worker_threads';

import { unzipSync, zipSync } from 'fflate';

import { startApiProcess } from './support/api-process.js';
import { steward } from './support/cli.js';
import { agree } from './support/drawings.js';
import { fileTree, treeChanges } from './support/file-tree.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import {
  processMemory,
  resetPeak,
  sendChunked,
  sendFile,
  servingProcess,
  writeRandomGeoTiff,
} from './support/large-upload.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, pixelsOf } from './support/png.js';
import { type Check } from './support/project-check.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { scratchFolder } from './support/scratch.js';
import { type Stack, startStack } from './support/stack.js';
import { selectedStorage } from './support/test-storage.js';
import { until } from './support/wait.js';

/** Bytes an upload may have here: a bundle of the fixtures is about 100 KiB. */
const BODY_LIMIT = 2 * 1024 * 1024;
const VIEW = { bbox: [0.5, 43.5, 3.5, 46.5], size: 300 } as const;
/** The large uploads: a GeoTIFF of random bytes, alone and in a bundle. */
const LARGE_BYTES = 200 * 1024 * 1024;
/**
 * KiB the API's resident memory may grow by while it takes a 200 MB upload: under half of it, so an
 * upload held in memory fails (a 128 MB bundle took 256 MiB when they were). The growth is read
 * buffers Node collects as garbage, so it follows the collector's timing: the 64 MiB target
 * is a figure to report (the test prints it), not a bound a loaded machine keeps every run.
 */
const STREAMED_RSS_GROWTH_KIB = 96 * 1024;

interface QgisLayers {
  layers: Record<string, { valid: boolean; features: number | null; source: string }>;
}

interface PublishAnswer {
  created: boolean;
  etag: string;
  data_dir?: string;
  data_files: string[];
  check: Check;
}

function readWithQgis(project: string): QgisLayers {
  return JSON.parse(runPyqgisScript('publish_oracle.py', 'read', project)) as QgisLayers;
}

/** A zip's first local header, of a stored file `name` of `size` bytes (its CRC-32 left 0), as its bytes would follow. */
function storedEntryStart(name: string, size: number): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt32LE(size, 18);
  header.writeUInt32LE(size, 22);
  header.writeUInt16LE(Buffer.byteLength(name), 26);
  return Buffer.concat([header, Buffer.from(name)]);
}

/** The worker threads of this process (the API's, which receives uploads), as they start. */
const threads: Worker[] = [];
subscribe('worker_threads', (message) => threads.push((message as { worker: Worker }).worker));

/** Unpacks a zip into `folder`. */
function unpack(bytes: Buffer, folder: string): string[] {
  const entries = unzipSync(bytes);
  for (const [name, content] of Object.entries(entries)) {
    mkdirSync(dirname(join(folder, name)), { recursive: true });
    writeFileSync(join(folder, name), content);
  }
  return Object.keys(entries).sort();
}

describe(`publishing projects from QGIS Desktop (${selectedStorage()} storage)`, () => {
  let stack: Stack;
  let data: Fixtures;
  let uploads = '';
  const scratch = scratchFolder('steward-publish-');
  let desktops = 0;

  async function put(
    name: string,
    body: Uint8Array | string,
    query = '',
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown; etag: string | null }> {
    const response = await fetch(`${stack.api.url}/api/projects/${name}/archive${query}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip', ...headers },
      body: typeof body === 'string' ? body : Buffer.from(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, body: parsed, etag: response.headers.get('etag') };
  }

  async function download(name: string, query = ''): Promise<Response> {
    const response = await fetch(`${stack.api.url}/api/projects/${name}/archive${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    return response;
  }

  /** The hidden files (uploads being received) in the upload root and its folders. */
  function hiddenFiles(): string[] {
    const entries = readdirSync(uploads, { recursive: true, encoding: 'utf8' });
    return entries.filter((entry) => entry.split('/').some((part) => part.startsWith('.')));
  }

  /** What the upload root holds for project `name`. */
  function uploaded(name: string): string[] {
    const folder = join(uploads, name);
    return existsSync(folder) ? readdirSync(folder) : [];
  }

  /**
   * A folder as QGIS Desktop leaves it: project.qgs reading data/places.gpkg and data/colours.tif
   * (in a data root, so that the project alone can be published with its paths made absolute).
   */
  function desktopProject(): string {
    const folder = join(data.dir, `desktop-${++desktops}`);
    mkdirSync(join(folder, 'data'), { recursive: true });
    copyFileSync(data.geopackage, join(folder, 'data', 'places.gpkg'));
    copyFileSync(data.rgbTiff, join(folder, 'data', 'colours.tif'));
    runPyqgisScript('publish_oracle.py', 'make', folder, 'places.gpkg', 'colours.tif');
    return folder;
  }

  function bundleOf(folder: string, files = ['project.qgs', 'data/places.gpkg', 'data/colours.tif']): Uint8Array {
    return zipSync(Object.fromEntries(files.map((file) => [file, readFileSync(join(folder, file))])));
  }

  before(async () => {
    data = makeFixtures();
    uploads = join(scratch, 'uploads');
    mkdirSync(uploads);
    stack = await startStack({ dataRoots: [data.dir, uploads], uploadRoot: uploads, publishBodyLimit: BODY_LIMIT });
  });

  after(async () => {
    await stack?.stop();
  });

  it('gives a project as a .qgz and as a bundle with its data that QGIS opens, every layer valid', async () => {
    assert.equal((await stack.call('POST', '/api/projects', { name: 'outgoing', author: 'tests' })).status, 201);
    for (const layer of [
      { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` },
      { type: 'raster', name: 'rgb', datasource: data.rgbTiff },
    ]) {
      const added = await stack.call('POST', '/api/projects/outgoing/layers', layer);
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    const qgz = await download('outgoing');
    assert.equal(qgz.headers.get('content-type'), 'application/zip');
    assert.match(qgz.headers.get('content-disposition') ?? '', /filename="outgoing\.qgz"/);
    const etag = qgz.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]+"$/);
    const qgzFile = join(scratch, 'outgoing.qgz');
    writeFileSync(qgzFile, Buffer.from(await qgz.arrayBuffer()));
    const opened = readWithQgis(qgzFile);
    assert.deepEqual(Object.keys(opened.layers).sort(), ['points', 'rgb']);
    assert.equal(opened.layers['points']?.valid, true);
    assert.equal(opened.layers['points']?.features, 3);
    assert.equal(opened.layers['rgb']?.valid, true);

    const bundle = await download('outgoing', '?data=true');
    assert.match(bundle.headers.get('content-disposition') ?? '', /filename="outgoing\.zip"/);
    assert.equal(bundle.headers.get('etag'), etag, 'the same version of the project');
    const folder = join(scratch, 'outgoing-bundle');
    const bundleBytes = Buffer.from(await bundle.arrayBuffer());
    const bundleFile = join(scratch, 'outgoing.zip');
    writeFileSync(bundleFile, bundleBytes);
    // Info-ZIP checks every CRC-32 of the streamed bundle, its data descriptors' included.
    assert.match(execFileSync('unzip', ['-t', bundleFile], { encoding: 'utf8' }), /No errors detected/);
    const entries = unpack(bundleBytes, folder);
    const dataFolder = `data/${data.dir.split('/').pop() ?? ''}`;
    // Sidecars GDAL reads with a dataset (the statistics QGIS wrote in rgb.tif.aux.xml) go along.
    assert.deepEqual(
      entries.filter((entry) => !entry.endsWith('.aux.xml')),
      [`${dataFolder}/rgb.tif`, `${dataFolder}/vectors.gpkg`, 'outgoing.qgs'],
    );
    const text = readFileSync(join(folder, 'outgoing.qgs'), 'utf8');
    const naming = text.split('\n').filter((line) => line.includes(data.dir));
    assert.deepEqual(naming, [], "no line names the server's folders");
    assert.match(text, new RegExp(`<datasource>\\./${dataFolder}/vectors\\.gpkg\\|layername=points</datasource>`));
    const read = readWithQgis(join(folder, 'outgoing.qgs'));
    for (const [name, layer] of Object.entries(read.layers)) {
      assert.equal(layer.valid, true, `${name} is valid`);
      assert.ok(layer.source.startsWith(folder), `${name} reads the bundle's file: ${layer.source}`);
    }
    assert.equal(read.layers['points']?.features, 3);
  });

  it('publishes a bundle made in QGIS Desktop, which QGIS Server draws as QGIS draws the original', async () => {
    const desktop = desktopProject();
    const expected = join(scratch, 'expected.png');
    const [xmin, ymin, xmax, ymax] = VIEW.bbox;
    runPyqgisScript(
      'publish_oracle.py',
      'draw',
      join(desktop, 'project.qgs'),
      expected,
      '300',
      '300',
      ...[xmin, ymin, xmax, ymax].map(String),
    );

    const published = await put('published', bundleOf(desktop));
    assert.equal(published.status, 201, JSON.stringify(published.body));
    const answer = published.body as PublishAnswer;
    assert.equal(answer.created, true);
    assert.equal(published.etag, answer.etag);
    assert.deepEqual(answer.data_files.sort(), ['data/colours.tif', 'data/places.gpkg']);
    assert.deepEqual(answer.check.layers.map((layer) => [layer.name, layer.status]).sort(), [
      ['colours', 'ok'],
      ['places', 'ok'],
    ]);
    const revisions = uploaded('published');
    assert.equal(revisions.length, 1);
    assert.equal(answer.data_dir, join(uploads, 'published', revisions[0] ?? ''));
    assert.ok(existsSync(join(answer.data_dir ?? '', 'data', 'places.gpkg')));

    const query = new URLSearchParams({
      layers: 'colours,places',
      bbox: VIEW.bbox.join(','),
      crs: 'EPSG:4326',
      width: String(VIEW.size),
      height: String(VIEW.size),
    });
    const map = await fetch(`${stack.api.url}/api/projects/published/wms?${query}`);
    assert.equal(map.status, 200, await map.clone().text());
    const served = decodePng(Buffer.from(await map.arrayBuffer()));
    const drawn = decodePng(readFileSync(expected));
    assert.ok(served.paintedPixels() > 0, 'QGIS Server drew the layers');
    assert.ok(pixelsOf(served, [255, 0, 0]) > 0, 'the places are drawn in their red squares');
    assert.ok(pixelsOf(served, [200, 40, 90]) > 0, 'the raster is drawn in its colours');
    const { ok, differing } = agree(served, drawn);
    assert.ok(ok, `${differing} of ${drawn.paintedPixels()} painted pixels differ from PyQGIS's drawing`);

    // And back to Desktop: the bundle opens with both layers valid, reading its own files.
    const folder = join(scratch, 'round-trip');
    unpack(Buffer.from(await (await download('published', '?data=true')).arrayBuffer()), folder);
    const read = readWithQgis(join(folder, 'published.qgs'));
    assert.equal(read.layers['places']?.valid, true);
    assert.equal(read.layers['places']?.features, 3);
    assert.equal(read.layers['colours']?.valid, true);
    assert.ok(read.layers['colours']?.source.startsWith(folder));
  });

  it('replaces a project only with ?replace=true or the ETag it has now', async () => {
    const desktop = desktopProject();
    const bundle = bundleOf(desktop);
    const first = await put('replaced', bundle);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const refused = await put('replaced', bundle);
    assert.equal(refused.status, 409);
    assert.match((refused.body as { error: string }).error, /replace=true/);
    const stale = await put('replaced', bundle, '', { 'if-match': '"not-its-version"' });
    assert.equal(stale.status, 412);
    assert.equal(uploaded('replaced').length, 1, 'the refused uploads left no files');
    const matched = await put('replaced', bundle, '', { 'if-match': first.etag ?? '' });
    assert.equal(matched.status, 200, JSON.stringify(matched.body));
    assert.equal((matched.body as PublishAnswer).created, false);
    assert.notEqual(matched.etag, first.etag);
    const replaced = await put('replaced', bundle, '?replace=true');
    assert.equal(replaced.status, 200);
    // The earlier revisions stay: versions of the project's history read them.
    const revisions = [first, matched, replaced].map((reply) =>
      (reply.body as PublishAnswer).data_dir?.split('/').pop(),
    );
    assert.deepEqual(uploaded('replaced').sort(), revisions.sort());
    const etag = (await download('replaced')).headers.get('etag');
    assert.equal(etag, replaced.etag);
    const absent = await put('never-there', bundle, '', { 'if-match': etag ?? '' });
    assert.equal(absent.status, 412);
  });

  /** The status of a PUT of `bytes` zero bytes as project `name` to `api`, sent as a stream; a failure to send, told. */
  async function streamedPut(api: string, name: string, bytes: number): Promise<number | string> {
    const piece = new Uint8Array(1024 * 1024);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= bytes) return controller.close();
        controller.enqueue(piece);
        sent += piece.byteLength;
      },
    });
    try {
      const response = await fetch(`${api}/api/projects/${name}/archive`, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes) },
        body,
        duplex: 'half',
      } as RequestInit);
      await response.arrayBuffer();
      return response.status;
    } catch (error) {
      return String((error as Error).cause ?? error);
    }
  }

  /** The revision folder a publish answered, by its name. */
  function revisionOf(reply: { body: unknown }): string {
    return (reply.body as PublishAnswer).data_dir?.split('/').pop() ?? '';
  }

  /** The project file of `desktop`, reading its data files in `folder` by their absolute path. */
  function projectReading(desktop: string, folder: string): string {
    return readFileSync(join(desktop, 'project.qgs'), 'utf8').replaceAll('./data/', `${folder}/data/`);
  }

  it('keeps earlier revisions while a version of the history reads them: a restore finds its files', async () => {
    const desktop = desktopProject();
    const first = await put('revisions', bundleOf(desktop));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const second = await put('revisions', bundleOf(desktop), '?replace=true');
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.deepEqual(uploaded('revisions').sort(), [revisionOf(first), revisionOf(second)].sort());

    const { versions } = (await stack.call('GET', '/api/projects/revisions/versions')).body as {
      versions: Array<{ id: string }>;
    };
    const oldest = versions.at(-1)?.id ?? '';
    const restored = await stack.call('POST', `/api/projects/revisions/versions/${oldest}/restore`);
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    const check = (await stack.call('GET', '/api/projects/revisions/check')).body as Check;
    assert.equal(check.status, 'ok', JSON.stringify(check));
    for (const layer of ['places', 'colours']) {
      const info = (await stack.call('GET', `/api/projects/revisions/layers/${layer}`)).body as {
        source: string;
        valid: boolean;
      };
      assert.ok(
        info.valid && info.source.includes(revisionOf(first)),
        `${layer} reads the first revision: ${info.source}`,
      );
    }

    // A lone project reading the first revision's files keeps that revision as well.
    const lone = await put(
      'revisions',
      projectReading(desktop, join(uploads, 'revisions', revisionOf(first))),
      '?replace=true',
    );
    assert.equal(lone.status, 200, JSON.stringify(lone.body));
    assert.deepEqual(uploaded('revisions').sort(), [revisionOf(first), revisionOf(second)].sort());

    // Removed with its history, the project takes its revisions along, not the data others put there.
    const unrelated = join(uploads, 'revisions', 'kept.txt');
    writeFileSync(unrelated, 'not a revision');
    assert.equal((await stack.call('DELETE', '/api/projects/revisions')).status, 200);
    assert.deepEqual(uploaded('revisions'), ['kept.txt']);
    rmSync(unrelated);
  });

  it('removes earlier revisions once neither the project nor a version of its history reads them', async () => {
    const root = join(scratch, 'short-history');
    mkdirSync(root);
    const brief = await startStack({
      dataRoots: [data.dir, root],
      uploadRoot: root,
      publishBodyLimit: BODY_LIMIT,
      history: { versions: 1, days: 90 },
    });
    try {
      const publish = async (body: Uint8Array | string, status: number): Promise<string> => {
        const reply = await fetch(`${brief.api.url}/api/projects/brief/archive?replace=true`, {
          method: 'PUT',
          body: typeof body === 'string' ? body : Buffer.from(body),
        });
        const answer = (await reply.json()) as PublishAnswer;
        assert.equal(reply.status, status, JSON.stringify(answer));
        return answer.data_dir ?? '';
      };
      const kept = (): string[] => (existsSync(join(root, 'brief')) ? readdirSync(join(root, 'brief')) : []);
      const desktop = desktopProject();
      await publish(bundleOf(desktop), 201);
      // The history keeps one version: the one of the replacement, which reads its own revision only.
      const second = await publish(bundleOf(desktop), 200);
      assert.deepEqual(kept(), [second.split('/').pop()]);
      await publish(projectReading(desktop, second), 200);
      assert.deepEqual(kept(), [second.split('/').pop()], 'the stored project reads it');
      // Another project reading the revision's files keeps it too, until it is removed.
      const other = await fetch(`${brief.api.url}/api/projects/other/archive`, {
        method: 'PUT',
        body: projectReading(desktop, second),
      });
      assert.equal(other.status, 201, await other.text());
      await publish(projectReading(desktop, desktop), 200);
      assert.deepEqual(kept(), [second.split('/').pop()], 'another project reads it');
      const otherCheck = (await brief.call('GET', '/api/projects/other/check')).body as Check;
      assert.equal(otherCheck.status, 'ok', JSON.stringify(otherCheck));
      assert.equal((await brief.call('DELETE', '/api/projects/other')).status, 200);
      await publish(projectReading(desktop, desktop), 200);
      assert.ok(!existsSync(join(root, 'brief')), 'no revision is read any more: none is left, nor their folder');
      const check = (await brief.call('GET', '/api/projects/brief/check')).body as Check;
      assert.equal(check.status, 'ok', JSON.stringify(check));
    } finally {
      await brief.stop();
    }
  });

  it('refuses a project with broken layers, naming them, unless ?allow_broken=true', async () => {
    const desktop = desktopProject();
    const without = bundleOf(desktop, ['project.qgs', 'data/colours.tif']);
    const refused = await put('broken', without);
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match((refused.body as { error: string }).error, /"places"/);
    assert.doesNotMatch((refused.body as { error: string }).error, /"colours"/);
    assert.equal((await stack.call('GET', '/api/projects/broken')).status, 404);
    assert.ok(!existsSync(join(uploads, 'broken')), 'the data files written are removed, and the folder made for them');
    const allowed = await put('broken', without, '?allow_broken=true');
    assert.equal(allowed.status, 201, JSON.stringify(allowed.body));
    const places = (allowed.body as PublishAnswer).check.layers.find((layer) => layer.name === 'places');
    assert.equal(places?.status, 'broken');
  });

  it('takes a lone .qgs and a .qgz, and refuses unsafe archives, bombs, unknown formats and unreadable projects', async () => {
    const desktop = desktopProject();
    const qgs = readFileSync(join(desktop, 'project.qgs'), 'utf8').replaceAll('./data/', `${desktop}/data/`);
    const alone = await put('lone', qgs, '', { 'content-type': 'application/xml' });
    assert.equal(alone.status, 201, JSON.stringify(alone.body));
    assert.deepEqual((alone.body as PublishAnswer).data_files, []);
    const qgz = zipSync({ 'lone.qgs': Buffer.from(qgs), 'lone.qgd': new Uint8Array(10) });
    assert.equal((await put('lone-qgz', qgz)).status, 201);

    const bad: Array<[string, Uint8Array | string, number, RegExp]> = [
      ['unsafe', zipSync({ 'project.qgs': Buffer.from(qgs), '../escape.gpkg': new Uint8Array(4) }), 400, /leave/],
      [
        'bomb',
        zipSync({ 'project.qgs': Buffer.from(qgs), 'zeros.bin': new Uint8Array(5 * BODY_LIMIT) }),
        400,
        /more than/,
      ],
      ['none', zipSync({ 'readme.txt': Buffer.from('hello') }), 400, /no QGIS project/],
      ['two', zipSync({ 'a.qgs': Buffer.from(qgs), 'b.qgs': Buffer.from(qgs) }), 400, /several/],
      ['unknown', 'GIF89a not a project', 415, /neither/],
      ['unreadable', '<qgis><projectlayers>', 422, /cannot be read/],
      ['large', new Uint8Array(BODY_LIMIT + 1), 413, /./],
    ];
    for (const [name, body, status, message] of bad) {
      const reply = await put(name, body);
      assert.equal(reply.status, status, `${name}: ${JSON.stringify(reply.body)}`);
      assert.match((reply.body as { error: string }).error, message, name);
      assert.equal((await stack.call('GET', `/api/projects/${name}`)).status, 404, `${name} is not stored`);
      assert.ok(!existsSync(join(uploads, name)), `${name} left no files nor folder`);
    }
  });
  it('publishes a folder and downloads a bundle with the steward command', async () => {
    const desktop = desktopProject();
    const env = { STEWARD_SERVER_URL: stack.api.url };
    const published = await steward(['publish', desktop, '--project', 'from-cli'], env);
    assert.equal(published.code, 0, published.err + published.out);
    assert.match(published.out, /^Published project from-cli \(ok\)\.\nData files \(\d+\) in /);
    assert.match(published.out, /places\s+ok/);
    const again = await steward(['publish', desktop, '--project', 'from-cli'], env);
    assert.equal(again.code, 1);
    assert.match(again.err, /replace=true/);
    const replaced = await steward(['publish', desktop, '--project', 'from-cli', '--replace', '--json'], env);
    assert.equal(replaced.code, 0, replaced.err);
    assert.equal((JSON.parse(replaced.out) as PublishAnswer).created, false);

    const output = join(scratch, 'from-cli.zip');
    const downloaded = await steward(['download', 'from-cli', '--data', '--output', output], env);
    assert.equal(downloaded.code, 0, downloaded.err);
    const folder = join(scratch, 'from-cli');
    unpack(readFileSync(output), folder);
    const read = readWithQgis(join(folder, 'from-cli.qgs'));
    assert.equal(read.layers['places']?.valid, true);
    assert.equal(read.layers['colours']?.valid, true);
    const qgz = await steward(['download', 'from-cli', '--output', join(scratch, 'from-cli.qgz')], env);
    assert.equal(qgz.code, 0, qgz.err);
    assert.equal(readWithQgis(join(scratch, 'from-cli.qgz')).layers['places']?.valid, true);
  });
  it('takes data files GDAL opens into the upload root, lists and gives them, and keeps those a layer reads', async () => {
    const url = (path: string): string => `${stack.api.url}/api/data/${path}`;
    const sent = await fetch(url('shared/places.gpkg'), { method: 'PUT', body: readFileSync(data.geopackage) });
    assert.equal(sent.status, 201, await sent.clone().text());
    assert.ok(existsSync(join(uploads, 'shared', 'places.gpkg')));
    const again = await fetch(url('shared/places.gpkg'), { method: 'PUT', body: readFileSync(data.geopackage) });
    assert.equal(again.status, 200);
    const junk = await fetch(url('shared/notes.tif'), { method: 'PUT', body: 'not a raster' });
    assert.equal(junk.status, 422, await junk.clone().text());
    assert.deepEqual(readdirSync(join(uploads, 'shared')), ['places.gpkg'], 'the refused file left nothing');
    const escape = await fetch(`${url('shared')}%2F..%2F..%2Fescaped.gpkg`, { method: 'PUT', body: 'x' });
    assert.equal(escape.status, 400, 'a path leaving the upload root is refused');
    assert.ok(!existsSync(join(uploads, '..', 'escaped.gpkg')));

    const listing = await fetch(url('shared'));
    assert.deepEqual(await listing.json(), [
      { name: 'places.gpkg', type: 'file', size: readFileSync(data.geopackage).length },
    ]);
    const file = await fetch(url('shared/places.gpkg'));
    assert.equal(file.status, 200);
    assert.deepEqual(Buffer.from(await file.arrayBuffer()), readFileSync(data.geopackage));

    assert.equal((await stack.call('POST', '/api/projects', { name: 'reader', author: 'tests' })).status, 201);
    const layer = {
      type: 'vector',
      name: 'shared-places',
      datasource: `${join(uploads, 'shared', 'places.gpkg')}|layername=points`,
    };
    assert.equal((await stack.call('POST', '/api/projects/reader/layers', layer)).status, 201);
    const refused = await stack.call('DELETE', '/api/data/shared/places.gpkg');
    assert.equal(refused.status, 409);
    assert.match((refused.body as { error: string }).error, /project "reader" layer "shared-places"/);
    assert.equal((await stack.call('DELETE', '/api/projects/reader/layers/shared-places')).status, 200);
    assert.equal((await stack.call('DELETE', '/api/data/shared/places.gpkg')).status, 200);
    assert.equal((await stack.call('DELETE', '/api/data/shared')).status, 200);
    assert.ok(!existsSync(join(uploads, 'shared')));
  });
  it('leaves no folder behind of a data upload refused or cut short, nor removes one that was there', async () => {
    const url = `${stack.api.url}/api/data/new/deeper/x.gpkg`;
    /** The upload root's tree, once the API has cleared up after the refusal (it notices a dropped connection as it reads). */
    const settledTree = async (expected: Set<string>): Promise<Set<string>> => {
      const until = Date.now() + 5_000;
      let tree = fileTree(uploads);
      while (treeChanges(expected, tree).added.length > 0 && Date.now() < until) {
        await new Promise((done) => setTimeout(done, 100));
        tree = fileTree(uploads);
      }
      return tree;
    };
    const refusals: Array<[string, () => Promise<number | undefined>, number | undefined]> = [
      ['unreadable', async () => (await fetch(url, { method: 'PUT', body: 'not a GeoPackage' })).status, 422],
      ['too large', async () => (await sendChunked(url, BODY_LIMIT + 1024 * 1024))?.status, 413],
      ['cut short', async () => (await sendChunked(url, BODY_LIMIT, 256 * 1024))?.status, undefined],
    ];
    for (const [what, send, status] of refusals) {
      const before = fileTree(uploads);
      assert.equal(await send(), status, what);
      // A dropped connection may reach the API after the client has gone on: given a moment to notice it.
      if (status === undefined) await new Promise((done) => setTimeout(done, 1_000));
      assert.deepEqual(treeChanges(before, await settledTree(before)), { added: [], removed: [] }, what);
    }
    // A folder that was there stays, even empty; only the one the refused upload made goes.
    mkdirSync(join(uploads, 'new'));
    const before = fileTree(uploads);
    assert.equal((await fetch(url, { method: 'PUT', body: 'not a GeoPackage' })).status, 422);
    assert.deepEqual(treeChanges(before, await settledTree(before)), { added: [], removed: [] });
    assert.equal((await stack.call('DELETE', '/api/data/new')).status, 200);

    // A refused upload and a good one into the same new folder at once: the good one is stored whole.
    for (let round = 0; round < 5; round++) {
      const folder = `together-${round}/deeper`;
      const [refused, stored] = await Promise.all([
        fetch(`${stack.api.url}/api/data/${folder}/junk.gpkg`, { method: 'PUT', body: 'not a GeoPackage' }),
        fetch(`${stack.api.url}/api/data/${folder}/places.gpkg`, {
          method: 'PUT',
          body: readFileSync(data.geopackage),
        }),
      ]);
      assert.deepEqual([refused.status, stored.status], [422, 201], await stored.text());
      assert.deepEqual(readdirSync(join(uploads, folder)), ['places.gpkg']);
    }
  });

  it('refuses uploads past the limit however they are sent, and leaves nothing of them or of ones cut short', async () => {
    const over = BODY_LIMIT + 1024 * 1024;
    // A bundle's start, its first file's bytes (zeros) written to the disk as they arrive until refused or cut.
    const bundleStart = storedEntryStart('data/zeros.bin', over);
    const archive = await sendChunked(`${stack.api.url}/api/projects/chunked/archive`, over, undefined, bundleStart);
    assert.equal(archive?.status, 413, JSON.stringify(archive?.body));
    const file = await sendChunked(`${stack.api.url}/api/data/chunked/large.tif`, over);
    assert.equal(file?.status, 413, JSON.stringify(file?.body));
    assert.equal(
      await sendChunked(`${stack.api.url}/api/projects/cut/archive`, over, 256 * 1024, bundleStart),
      undefined,
    );
    // Declaring its length, a bundle is read from its socket by a thread of its own.
    const declared = storedEntryStart('data/zeros.bin', BODY_LIMIT);
    const cut = `${stack.api.url}/api/projects/cut-declared/archive`;
    assert.equal(await sendChunked(cut, BODY_LIMIT, 256 * 1024, declared, true), undefined);
    // Refused by the thread at its first entry while the client still sends: the answer reaches it.
    const unsafe = await sendChunked(
      `${stack.api.url}/api/projects/unsafe-declared/archive`,
      BODY_LIMIT,
      undefined,
      storedEntryStart('../escape.bin', BODY_LIMIT),
      true,
    );
    assert.equal(unsafe?.status, 400, JSON.stringify(unsafe?.body));
    assert.match((unsafe?.body as { error: string }).error, /leave/);
    assert.equal(await sendChunked(`${stack.api.url}/api/data/cut/short.tif`, over, 256 * 1024), undefined);
    const cutFile = `${stack.api.url}/api/data/cut-declared/short.tif`;
    assert.equal(await sendChunked(cutFile, BODY_LIMIT, 256 * 1024, undefined, true), undefined);
    // The API notices a dropped connection as it reads: given a moment, then watched until it has cleared up.
    await new Promise((done) => setTimeout(done, 1_000));
    const settled = Date.now() + 5_000;
    const clearing = (): boolean => hiddenFiles().length > 0 || existsSync(join(uploads, 'cut-declared'));
    while (clearing() && Date.now() < settled) await new Promise((done) => setTimeout(done, 100));
    assert.deepEqual(hiddenFiles(), [], 'no part of a refused or cut short upload is left');
    assert.equal((await stack.call('GET', '/api/projects/chunked')).status, 404);
    assert.equal((await stack.call('GET', '/api/projects/cut')).status, 404);
    assert.equal((await stack.call('GET', '/api/projects/cut-declared')).status, 404);
    assert.ok(!existsSync(join(uploads, 'cut-declared')), 'nor the folder made for the data file');
  });

  /**
   * PUTs `start` then zeros, BODY_LIMIT bytes declared, to `path`; once the thread receiving it has
   * made the hidden file `file`, ends the API's threads. The answer, read while the client goes on sending.
   */
  async function endThreadMidUpload(path: string, start: Buffer, file: string): Promise<string> {
    const url = new URL(`${stack.api.url}${path}`);
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', () => undefined); // the connection is closed once answered, however far the body got
    socket.write(
      `PUT ${url.pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n` +
        `Content-Length: ${BODY_LIMIT}\r\n\r\n`,
    );
    socket.write(Buffer.concat([start, Buffer.alloc(256 * 1024)]));
    await until(`the thread to write ${file}`, () => hiddenFiles().some((hidden) => hidden.endsWith(file)));
    await Promise.all(threads.map((thread) => thread.terminate()));
    // The client goes on sending: the answer reaches it all the same.
    const piece = Buffer.alloc(64 * 1024);
    for (let sent = start.length + 256 * 1024; sent < BODY_LIMIT && !socket.destroyed; sent += piece.length) {
      if (!socket.write(piece.subarray(0, Math.min(piece.length, BODY_LIMIT - sent)))) await once(socket, 'drain');
    }
    if (!socket.destroyed) await once(socket, 'close');
    return answer;
  }

  it('answers 503 to a bundle whose receiving thread ends mid-upload, leaves nothing, and takes the next', async () => {
    const start = storedEntryStart('data/zeros.bin', BODY_LIMIT);
    const answer = await endThreadMidUpload('/api/projects/orphan/archive', start, 'zeros.bin');
    assert.match(answer, /^HTTP\/1\.1 503 /);
    assert.match(
      answer,
      /"error":"the upload could not be received whole: the server stopped reading it; send it again"/,
    );
    assert.deepEqual(hiddenFiles(), [], 'nothing of the upload is left');
    assert.deepEqual(uploaded('orphan'), []);
    assert.equal((await stack.call('GET', '/api/projects/orphan')).status, 404);
    const again = await put('orphan', bundleOf(desktopProject()));
    assert.equal(again.status, 201, JSON.stringify(again.body));
  });

  it('receives a data file declaring its length on the thread: 503 when it ends mid-upload, nothing left', async () => {
    const answer = await endThreadMidUpload('/api/data/orphans/large.tif', Buffer.alloc(0), 'large.tif');
    assert.match(answer, /^HTTP\/1\.1 503 /);
    assert.match(
      answer,
      /"error":"the upload could not be received whole: the server stopped reading it; send it again"/,
    );
    assert.deepEqual(hiddenFiles(), [], 'nothing of the upload is left');
    assert.ok(!existsSync(join(uploads, 'orphans')), 'nor the folder made for it');
    const again = await fetch(`${stack.api.url}/api/data/orphans/places.gpkg`, {
      method: 'PUT',
      body: readFileSync(data.geopackage),
    });
    assert.equal(again.status, 201, await again.text());
    assert.equal((await stack.call('DELETE', '/api/data/orphans/places.gpkg')).status, 200);
    assert.equal((await stack.call('DELETE', '/api/data/orphans')).status, 200);
  });

  it('streams a 200 MB data file and a 200 MB bundle to the disk: the API grows by under half of it; refusals reach the sender', async (t) => {
    const root = join(scratch, 'large');
    const folder = desktopProject();
    writeRandomGeoTiff(join(folder, 'data', 'large.tif'), LARGE_BYTES);
    const bundle = join(scratch, 'large.zip');
    // Stored (zip -0): the bundle is as large as its files.
    execFileSync('zip', ['-0', '-q', '-r', bundle, 'project.qgs', 'data'], { cwd: folder });
    mkdirSync(root);
    const api = await startApiProcess({
      STEWARD_QGISSERVER_URL: stack.qgis.url,
      STEWARD_QGISSERVER_PROJECTS_DIR: join(scratch, 'large-projects'),
      STEWARD_DATA_ROOTS: `${data.dir}:${root}`,
      STEWARD_UPLOAD_ROOT: root,
      STEWARD_PUBLISH_BODY_LIMIT: '300M',
    });
    try {
      const server = servingProcess(api.pid);
      const growth = async (
        send: () => Promise<{ status: number; body: unknown }>,
        status: number,
      ): Promise<number> => {
        const before = processMemory(server).rss;
        await resetPeak(server);
        const reply = await send();
        assert.equal(reply.status, status, JSON.stringify(reply.body));
        return processMemory(server).peak - before;
      };
      const file = await growth(
        () => sendFile(`${api.url}/api/data/rasters/large.tif`, join(folder, 'data', 'large.tif')),
        201,
      );
      execFileSync('cmp', [join(folder, 'data', 'large.tif'), join(root, 'rasters', 'large.tif')]);
      const published = await growth(() => sendFile(`${api.url}/api/projects/large/archive`, bundle), 201);
      const dir = join(root, 'large');
      const revision = readdirSync(dir)[0] ?? '';
      assert.deepEqual(
        execFileSync('cmp', [join(folder, 'data', 'large.tif'), join(dir, revision, 'data', 'large.tif')]).toString(),
        '',
      );
      t.diagnostic(`the API grew by ${file} KiB taking the data file, ${published} KiB taking the bundle`);
      // Refused before its body is read (the project exists), each upload is answered while its
      // client goes on sending: the answer reaches the client, however far the body had got.
      const statuses: Array<number | string> = [];
      for (let attempt = 0; attempt < 20; attempt++) statuses.push(await streamedPut(api.url, 'large', 16 * 2 ** 20));
      assert.deepEqual(statuses, Array<number>(20).fill(409));
      for (const [what, kib] of [
        ['data file', file],
        ['bundle', published],
      ] as const) {
        assert.ok(kib <= STREAMED_RSS_GROWTH_KIB, `the API grew by ${kib} KiB taking the 200 MB ${what}`);
      }
    } finally {
      await api.kill();
    }
  });
});
