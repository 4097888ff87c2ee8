/**
 * Style uploads against the API's memory, in an API process bounded as `npm start` bounds it (the
 * default STEWARD_HEAP_MB, 384 MiB of V8 heap): concurrent QMLs near the body limit, whose parsing
 * takes many times their size, and small zips that would unpack to a QML past it. The process must
 * live through them, each upload be stored or told to come back (503 with Retry-After), and the
 * next request be served.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { zipSync } from 'fflate';

import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { processMemory, resetPeak, servingProcess } from './support/large-upload.js';
import { after, before, describe, it } from './support/node-test.js';
import { labelledCircleQml, squareSvg, stylePackage, svgMarkerQml } from './support/point-style.js';
import { TEST_QGIS } from './support/qgis-runtime.js';

const MIB = 1024 * 1024;
/** The attack: 8 concurrent QMLs of 15 MiB, each just under the 16 MiB body limit. */
const UPLOADS = 8;
const QML_BYTES = 15 * MIB;

/**
 * A point style QGIS reads, padded to `bytes` with symbol layer properties QGIS ignores: hundreds
 * of thousands of small elements, the most a document of its size costs to parse; all alike
 * (`alike`), they compress a thousandfold.
 */
function largeQml(bytes: number, alike = false): string {
  const style = labelledCircleQml('DejaVu Sans');
  const at = style.indexOf('<prop k="name"');
  const room = bytes - style.length;
  const props: string[] = [];
  let length = 0;
  for (let n = 0; length < room; n++) {
    const prop = alike ? '<prop k="p" v="0"/>\n' : `<prop k="p${n}" v="${n}"/>\n`;
    props.push(prop);
    length += prop.length;
  }
  return style.slice(0, at) + props.join('') + style.slice(at);
}

async function putStyle(
  api: ApiProcess,
  style: string,
  type: string,
  body: string | Uint8Array,
): Promise<{ status: number; retryAfter: string | null; error?: string }> {
  const path = type === 'application/zip' ? 'package' : 'qml';
  const reply = await fetch(`${api.url}/api/projects/heavy/styles/${style}/${path}`, {
    method: 'PUT',
    headers: { 'content-type': type },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const answer = (await reply.json()) as { error?: string };
  return { status: reply.status, retryAfter: reply.headers.get('retry-after'), ...answer };
}

describe('style uploads within the bounded heap', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'steward-upload-budget-'));
  let api: ApiProcess;

  before(async () => {
    api = await startApiProcess({
      // No map is drawn: QGIS Server is never asked.
      STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/ows/',
      STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
      STEWARD_QGISSERVER_PROJECTS_DIR: join(scratch, 'projects'),
      STEWARD_HISTORY_VERSIONS: '0',
    });
    assert.equal((await api.call('POST', '/api/projects', { name: 'heavy', author: 'a' })).status, 201);
  });

  after(async () => {
    await api.kill();
    // The bounded child outlives its launcher by a moment.
    rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  it('stores or refuses with Retry-After each of 8 concurrent 15 MiB QMLs, and serves on', async (t) => {
    const qml = largeQml(QML_BYTES);
    assert.ok(Buffer.byteLength(qml) >= QML_BYTES && Buffer.byteLength(qml) < 16 * MIB);
    const server = servingProcess(api.pid);
    await resetPeak(server);
    const answers = await Promise.all(
      Array.from({ length: UPLOADS }, (_, n) => putStyle(api, `large-${n}`, 'application/xml', qml)),
    );
    const statuses = answers.map((answer) => answer.status);
    t.diagnostic(`statuses ${statuses.join(' ')}; peak RSS ${Math.round(processMemory(server).peak / 1024)} MiB`);
    for (const answer of answers) {
      assert.ok([201, 503].includes(answer.status), `${JSON.stringify(answer)}\n${api.log()}`);
      if (answer.status === 503) {
        assert.equal(answer.retryAfter, '5');
        assert.match(answer.error ?? '', /too many uploads/);
      }
    }
    assert.ok(statuses.includes(201), 'at least one is stored');
    const stored = (await api.call('GET', '/api/projects/heavy/styles')).body as string[];
    const created = answers.flatMap((answer, n) => (answer.status === 201 ? [`large-${n}`] : []));
    assert.deepEqual(
      stored.filter((name) => name.startsWith('large-')),
      created.sort(),
    );
    // The process that answered is the one that serves on, and takes the next upload.
    assert.equal(servingProcess(api.pid), server);
    assert.equal((await putStyle(api, 'after', 'application/xml', labelledCircleQml('DejaVu Sans'))).status, 201);
    assert.equal((await putStyle(api, 'large-again', 'application/xml', qml)).status, 201);
  });

  it('keeps taking style writes in a project of large styles and kept images, each looking through them all', async (t) => {
    const write = async (project: string, style: string): Promise<number> => {
      const started = performance.now();
      const reply = await fetch(`${api.url}/api/projects/${project}/styles/${style}/qml`, {
        method: 'PUT',
        headers: { 'content-type': 'application/xml' },
        body: labelledCircleQml('DejaVu Sans'),
      });
      assert.ok([200, 201].includes(reply.status), await reply.text());
      return performance.now() - started;
    };
    const imaged = stylePackage({
      'style.qml': svgMarkerQml('square.svg', 'DejaVu Sans'),
      'square.svg': squareSvg([1, 2, 3]),
    });
    for (const project of ['empty', 'heavy']) {
      if (project === 'empty')
        assert.equal((await api.call('POST', '/api/projects', { name: project, author: 'a' })).status, 201);
      const reply = await fetch(`${api.url}/api/projects/${project}/styles/imaged/package`, {
        method: 'PUT',
        headers: { 'content-type': 'application/zip' },
        body: new Uint8Array(imaged),
      });
      assert.equal(reply.status, 201, await reply.text());
    }
    const median = async (project: string): Promise<number> => {
      const times: number[] = [];
      for (let n = 0; n < 5; n++) times.push(await write(project, `small-${n}`));
      return times.sort((a, b) => a - b)[2] ?? 0;
    };
    const server = servingProcess(api.pid);
    const empty = await median('empty');
    const heavy = await median('heavy');
    // Each write prunes the kept images, looking through every style: the two large ones are
    // parsed once, one at a time (both at once took the process past its heap), then known by digest.
    t.diagnostic(
      `small style writes: ${empty.toFixed(1)} ms beside nothing, ${heavy.toFixed(1)} ms beside 2 styles of 15 MiB`,
    );
    assert.equal(servingProcess(api.pid), server);
    const styles = (await api.call('GET', '/api/projects/heavy/styles')).body as string[];
    for (const style of ['imaged', 'large-again', 'small-4']) assert.ok(styles.includes(style), style);
  });

  it('refuses small zips that would unpack to a 60 MiB QML before unpacking them', async () => {
    const zip = zipSync({ 'style.qml': new TextEncoder().encode(largeQml(60 * MIB, true)) }, { level: 9 });
    assert.ok(zip.length < 256 * 1024, `${zip.length} bytes`);
    const answers = await Promise.all(
      Array.from({ length: 3 }, (_, n) => putStyle(api, `bomb-${n}`, 'application/zip', zip)),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 400, JSON.stringify(answer));
      assert.match(answer.error ?? '', /unpacks to \d+ bytes, more than the 16777216 a style may have/);
    }
    assert.equal((await putStyle(api, 'after-zips', 'application/xml', labelledCircleQml('DejaVu Sans'))).status, 201);
  });
});
