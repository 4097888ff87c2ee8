/**
 * Property-based hardening: every route the app lists in /api/openapi.json, with every
 * method, gets random and hostile path segments, query strings and bodies. No reply may be a 5xx,
 * every error must be `{"error": string}`, no file may appear outside the configured folders, and
 * every project must still load in QGIS Server afterwards.
 *
 * Every route gets the same number of runs (STEWARD_PROPERTY_RUNS, default 40), however loaded the
 * machine. Reproduce a failure with its seed: STEWARD_PROPERTY_SEED=<seed> (and STEWARD_PROPERTY_RUNS).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { strToU8, zipSync } from 'fflate';
import pino from 'pino';

import { consoleBuildDir } from '../src/checkout.js';
import { ERROR_CODES } from '../src/errors.js';
import { apiRoutes } from '../src/http/api.js';
import { buildApp } from '../src/http/app.js';
import { isOpenRoute } from '../src/http/open-routes.js';
import { FilesystemJobStore } from '../src/jobs/filesystem-jobs.js';
import { queuedJob } from '../src/jobs/record.js';
import { freePort } from '../src/runtime/ports.js';
import { MAX_OWNED_TARGET_BYTES } from '../src/storage/owned-files.js';
import { type CacheStack, startCacheStack } from './support/cache-stack.js';
import { fileTree, leftovers, treeChanges } from './support/file-tree.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import {
  type BodySpec,
  disguisedPaths,
  hostilePath,
  pathSegment,
  percentEncode,
  queryString,
  requestBody,
} from './support/hostile.js';
import { PLUGIN_PATH } from './support/insight-stack.js';
import { FakePlugin, hello } from './support/monitoring.js';
import { after, before, describe, it } from './support/node-test.js';
import { projectProblems, publishedLayers } from './support/qgis.js';
import { type RawReply, type RawRequest, rawRequest } from './support/raw-http.js';
import { waitFor } from './support/wait.js';

const SEED = Number(process.env['STEWARD_PROPERTY_SEED'] ?? 8_2024);
const RUNS = Number(process.env['STEWARD_PROPERTY_RUNS'] ?? 40);

const META_PROJECT = `p<&>"'q]]>`;
const META_LAYER = `l<&>"' ]]>`;
const META_STYLE = `s<&>"']]>`;

interface Operation {
  method: string;
  /** OpenAPI path, parameters as `{name}`. */
  template: string;
  params: string[];
}

const key = (operation: Operation): string => `${operation.method} ${operation.template}`;

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** Every operation the running app describes. */
async function listedOperations(baseUrl: string): Promise<Operation[]> {
  const document = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(document.paths).flatMap(([template, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.has(method))
      .map((method) => ({
        method: method.toUpperCase(),
        template,
        params: [...template.matchAll(/\{([\w*]+)\}/g)].map((match) => match[1] ?? ''),
      })),
  );
}

/** A body the route accepts, and variations of it that reach past its schema. */
interface ValidBody {
  example: unknown;
  arbitrary: fc.Arbitrary<unknown>;
  /** A body sent as it is under this type instead of as JSON: `example` and `arbitrary` give strings or bytes. */
  contentType?: string;
}

/** A document body as sent: bytes as they are, anything else as text. */
const documentBody = (body: unknown): string | Buffer => (Buffer.isBuffer(body) ? body : String(body));

/** A zip of these files, the texts in UTF-8. */
const zipOf = (files: Record<string, string>): Buffer =>
  Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)]))));

/** A polygon style as QGIS Desktop saves it, cut down to what QGIS needs to read it. */
const FILL_QML = `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16-Białowieża" styleCategories="AllStyleCategories">
 <renderer-v2 type="singleSymbol" symbollevels="0" enableorderby="0" forceraster="0">
  <symbols>
   <symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0">
    <layer class="SimpleFill" enabled="1" locked="0" pass="0">
     <Option type="Map">
      <Option type="QString" name="color" value="51,102,204,255"/>
      <Option type="QString" name="style" value="solid"/>
     </Option>
    </layer>
   </symbol>
  </symbols>
 </renderer-v2>
 <layerGeometryType>2</layerGeometryType>
</qgis>
`;

/** A polygon fill as GeoServer writes SLD 1.0. */
const FILL_SLD = `<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld">
<NamedLayer><Name>layer</Name><UserStyle><FeatureTypeStyle><Rule><PolygonSymbolizer>
<Fill><CssParameter name="fill">#3366cc</CssParameter></Fill>
</PolygonSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>
`;

const escapeXml = (text: string): string => text.replace(/[<>&"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A document as it is, cut short, and with one of `words` replaced by a hostile token. */
const xmlVariants = (document: string, words: string[], tokens: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant(document),
    fc.nat({ max: document.length }).map((end) => document.slice(0, end)),
    fc
      .tuple(fc.constantFrom(...words), fc.constantFrom(...tokens))
      .map(([word, token]) => document.replaceAll(word, escapeXml(token))),
  );

/** `name` left out when undefined, for the route that takes the name from its path. */
const named = (name: string | undefined): object => (name === undefined ? {} : { name });

function fillStyle(name: string | undefined): object {
  return {
    type: 'vector',
    ...named(name),
    rendering: { opacity: 0.8 },
    symbology: {
      type: 'single_symbol',
      symbol: 'fill',
      properties: { color: '#3366cc', style: 'solid', outline_width: 0.5, outline_color: '#000000' },
    },
  };
}

function grayStyle(name: string | undefined): object {
  return {
    type: 'raster',
    ...named(name),
    rendering: { brightness: 10, contrast: 5, gamma: 1, saturation: 0 },
    symbology: {
      type: 'singlebandgray',
      properties: {
        gray: { band: 1 },
        contrast_enhancement: { algorithm: 'StretchToMinimumMaximum', limits_min_max: 'MinMax' },
      },
    },
  };
}

function rgbStyle(name: string): object {
  const channel = (band: number) => ({ band });
  return {
    type: 'raster',
    name,
    rendering: {},
    symbology: {
      type: 'multibandcolor',
      properties: {
        red: channel(3),
        green: channel(2),
        blue: channel(1),
        contrast_enhancement: { algorithm: 'NoEnhancement', limits_min_max: 'MinMax' },
      },
    },
  };
}

/** Names a route may create: plain, XML metacharacters, other scripts, and as long as allowed. */
const freshName = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_-]{0,9}$/),
  fc.constantFrom(
    'x<y>',
    'a&b',
    'q"uote',
    "ap'os",
    'c]]>d',
    'ünï',
    '空间',
    'sp ace',
    '#hash',
    '%25',
    'semi;colon',
    'a,b',
    'x'.repeat(200),
    'é'.repeat(100),
    '%'.repeat(200),
  ),
);

function validBodies(data: Fixtures, tokens: readonly string[]): Record<string, ValidBody> {
  const layers = [
    { type: 'vector', datasource: `${data.geopackage}|layername=points` },
    { type: 'vector', datasource: `${data.geopackage}|layername=lines` },
    { type: 'vector', datasource: `${data.geopackage}|layername=polygons` },
    { type: 'vector', datasource: data.shapefile },
    { type: 'raster', datasource: data.rgbTiff },
    { type: 'raster', datasource: data.floatTiff },
  ];
  const layer = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...layers) },
    { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('raster', 'vector'), datasource: hostilePath(tokens) }) },
  );
  const output = fc.oneof(
    { weight: 3, arbitrary: fc.nat(20).map((n) => join(data.dir, `calc-${n}.tif`)) },
    { weight: 1, arbitrary: hostilePath(tokens) },
  );
  const styles = fc.oneof(freshName.map(fillStyle), freshName.map(grayStyle), freshName.map(rgbStyle));
  const expressions = [
    'elevation@1 * 2',
    '"rgb@1" + rgb@2 / 2',
    'elevation@1 > 10 AND elevation@1 < 100',
    'sqrt(abs(elevation@1)) - -1',
  ];
  const selection = {
    min_zoom: fc.integer({ min: -1, max: 20 }),
    max_zoom: fc.integer({ min: -1, max: 20 }),
    layers: fc.subarray(['elevation', 'rgb', 'polygons', 'missing'], { minLength: 1 }),
    extent: fc.tuple(fc.double(), fc.double(), fc.double(), fc.double()),
  };
  return {
    'POST /api/projects': {
      example: { name: 'canonical', author: 'a' },
      arbitrary: fc.record({ name: freshName, author: fc.oneof(fc.constant('author'), freshName) }),
    },
    'PATCH /api/projects/{project}': {
      example: { title: 'Canonical', abstract: 'a <b> & c' },
      arbitrary: fc.record(
        {
          title: fc.string(),
          abstract: fc.string(),
          author: fc.oneof(fc.constant('author'), fc.string()),
          wms_title: freshName,
          wms_abstract: fc.string(),
        },
        { requiredKeys: [] },
      ),
    },
    'POST /api/projects/{project}/layers': {
      example: { type: 'raster', name: 'canonical', datasource: data.floatTiff },
      arbitrary: fc
        .tuple(freshName, layer, fc.option(fc.constantFrom(4326, 3857, 'EPSG:4326'), { nil: undefined }))
        .map(([name, source, crs]) => ({ ...source, name, ...(crs === undefined ? {} : { crs }) })),
    },
    'PATCH /api/projects/{project}/services': {
      example: {
        wms: { crs: ['EPSG:4326'], max_width: 2000 },
        wfs: { layers: ['polygons'] },
        contact: { person: 'x' },
      },
      arbitrary: fc.record(
        {
          title: fc.string(),
          contact: fc.record({ person: fc.string(), mail: fc.string() }, { requiredKeys: [] }),
          wms: fc.record(
            {
              crs: fc.array(fc.constantFrom('EPSG:4326', 'EPSG:3857', '4326', 'bogus')),
              max_width: fc.option(fc.integer({ min: -5, max: 5000 }), { nil: null }),
              extent: fc.option(fc.tuple(fc.double(), fc.double(), fc.double(), fc.double()), { nil: null }),
            },
            { requiredKeys: [] },
          ),
          wfs: fc.record(
            { layers: fc.array(fc.constantFrom('polygons', 'points', 'rgb', 'missing')), enabled: fc.boolean() },
            { requiredKeys: [] },
          ),
          wmts: fc.record(
            { groups: fc.array(freshName, { maxLength: 2 }), layers: fc.array(fc.constantFrom('rgb', 'missing')) },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
    },
    'PUT /api/projects/{project}/tree': {
      example: { children: [{ type: 'layer', name: 'canonical', visible: true }] },
      arbitrary: fc.record({
        children: fc.array(
          fc.oneof(
            fc.record({
              type: fc.constant('layer'),
              name: fc.constantFrom('elevation', 'rgb', 'polygons', 'missing'),
              visible: fc.boolean(),
            }),
            fc.record({
              type: fc.constant('group'),
              name: freshName,
              children: fc.array(
                fc.record({
                  type: fc.constant('layer'),
                  name: fc.constantFrom('elevation', 'rgb', 'polygons', 'missing'),
                  visible: fc.boolean(),
                }),
                { maxLength: 2 },
              ),
            }),
          ),
          { maxLength: 4 },
        ),
      }),
    },
    'PATCH /api/projects/{project}/layers/{layer}': {
      example: { title: 'Canonical', abstract: 'a <b> & c' },
      arbitrary: fc.record(
        {
          title: fc.string(),
          abstract: fc.string(),
          keywords: fc.array(fc.string()),
          opacity: fc.double({ min: -1, max: 2 }),
          crs: fc.constantFrom('EPSG:4326', 'EPSG:3857', 'EPSG:0', ...tokens),
          datasource: fc.oneof(
            fc.constantFrom(`${data.geopackage}|layername=polygons`, data.rgbTiff, data.floatTiff),
            hostilePath(tokens),
          ),
        },
        { requiredKeys: [] },
      ),
    },
    'PUT /api/data/{*}': {
      contentType: 'application/octet-stream',
      example: readFileSync(data.floatTiff),
      arbitrary: fc.oneof(
        fc.constant(readFileSync(data.floatTiff)),
        fc.nat({ max: 400 }).map((end) => readFileSync(data.floatTiff).subarray(0, end)),
        fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      ),
    },
    'POST /api/projects/{project}/styles': { example: fillStyle('canonical'), arbitrary: styles },
    'POST /api/projects/{project}/styles/{style}': {
      example: fillStyle(undefined),
      arbitrary: fc.constantFrom(fillStyle(undefined), grayStyle(undefined)),
    },
    'PUT /api/projects/{project}/styles/{style}': {
      example: fillStyle(undefined),
      arbitrary: fc.constantFrom(fillStyle(undefined), grayStyle(undefined)),
    },
    'POST /api/projects/{project}/layers/{layer}/style-preview': {
      example: grayStyle('preview'),
      arbitrary: fc.constantFrom(grayStyle('preview'), fillStyle('preview'), grayStyle(undefined)),
    },
    'POST /api/projects/{project}/styles/default': {
      example: { name: 'fill', geometry: 'polygon' },
      arbitrary: fc.oneof(
        fc.record({ name: fc.constantFrom('fill', META_STYLE), geometry: fc.constantFrom('polygon', 'Polygon') }),
        fc.record({ style: fc.constant('default'), geometry: fc.constantFrom('point', 'line', 'polygon') }),
      ),
    },
    'POST /api/projects/{project}/layers/{layer}/style': {
      example: { name: 'gray', current: true },
      arbitrary: fc.record(
        { name: fc.constantFrom('gray', 'fill', 'colours', META_STYLE), current: fc.boolean() },
        { requiredKeys: ['name'] },
      ),
    },
    'POST /api/processing/raster/histogram/{project}/{layer}': {
      example: { count: 10 },
      arbitrary: fc.record(
        {
          min: fc.integer({ min: -100, max: 300 }),
          max: fc.integer({ min: -100, max: 300 }),
          count: fc.integer({ min: 1, max: 1000 }),
        },
        { requiredKeys: [] },
      ),
    },
    'PUT /api/projects/{project}/styles/{style}/qml': {
      contentType: 'application/xml',
      example: FILL_QML,
      arbitrary: xmlVariants(FILL_QML, ['singleSymbol', '51,102,204,255', 'qgis', '2'], tokens),
    },
    'PUT /api/projects/{project}/layers/{layer}/styles/{style}/sld': {
      contentType: 'application/vnd.ogc.sld+xml',
      example: FILL_SLD,
      arbitrary: xmlVariants(FILL_SLD, ['#3366cc', 'layer', 'PolygonSymbolizer', '1.0.0'], tokens),
    },
    'PUT /api/projects/{project}/styles/{style}/package': {
      contentType: 'application/zip',
      example: zipOf({ 'fill.qml': FILL_QML }),
      arbitrary: fc.oneof(
        fc.constant(zipOf({ 'fill.qml': FILL_QML })),
        fc.nat({ max: 200 }).map((end) => zipOf({ 'fill.qml': FILL_QML }).subarray(0, end)),
        fc.constantFrom(...tokens).map((token) => zipOf({ 'fill.qml': FILL_QML, [token]: '<svg/>' })),
        fc.constantFrom(...tokens).map((token) => zipOf({ [`${token}.qml`]: FILL_QML.replace('solid', token) })),
      ),
    },
    'POST /api/projects/{project}/cache/seed': {
      example: { min_zoom: 0, max_zoom: 1 },
      arbitrary: fc.record({ ...selection, refresh: fc.boolean() }, { requiredKeys: ['min_zoom', 'max_zoom'] }),
    },
    'POST /api/projects/{project}/cache/truncate': {
      example: { min_zoom: 0, max_zoom: 1 },
      arbitrary: fc.record(selection, { requiredKeys: ['min_zoom', 'max_zoom'] }),
    },
    'POST /api/auth/token': {
      example: { code: 'code', code_verifier: 'v'.repeat(43), redirect_uri: 'http://127.0.0.1/login/callback' },
      arbitrary: fc.record({
        code: fc.string({ minLength: 1 }),
        code_verifier: fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/),
        redirect_uri: fc.webUrl(),
      }),
    },
    'POST /api/tokens': {
      example: { name: 'canonical', roles: [] },
      arbitrary: fc.record(
        {
          name: freshName,
          roles: fc.subarray(['viewer', 'missing']),
          expires: fc.constantFrom('2099-01-01T00:00:00Z', '2001-01-01T00:00:00Z', null),
        },
        { requiredKeys: ['name', 'roles'] },
      ),
    },
    'PUT /api/roles/{role}': {
      example: { projects: { alpha: { access: 'read', layers: { rgb: { read: false } } } } },
      arbitrary: fc.record(
        {
          admin: fc.boolean(),
          projects: fc.dictionary(
            fc.oneof(fc.constantFrom('alpha', '*', 'public/*', 'a/b/c'), freshName),
            fc.record(
              {
                access: fc.constantFrom('read', 'write', 'admin'),
                layers: fc.dictionary(
                  freshName,
                  fc.record({ read: fc.boolean(), filter: fc.string({ minLength: 1 }) }, { requiredKeys: [] }),
                ),
              },
              { requiredKeys: ['access'] },
            ),
          ),
          services: fc.record({ WMS: fc.boolean(), 'WFS-T': fc.boolean() }, { requiredKeys: [] }),
        },
        { requiredKeys: [] },
      ),
    },
    'POST /api/processing/raster/calculator/{project}': {
      example: { expression: 'elevation@1 * 2', output: join(data.dir, 'canonical.tif') },
      arbitrary: fc.record({ expression: fc.constantFrom(...expressions), output }),
    },
    // Service "steward" is a closed port here: a request that passes its checks fails to connect (422).
    'POST /api/datasources/postgres/import': {
      example: { service: 'steward', schema: 'public', table: 'points', source: `${data.geopackage}|layername=points` },
      arbitrary: fc.record(
        {
          service: fc.constantFrom('steward', ...tokens),
          schema: fc.constantFrom('public', 'pg_catalog', ...tokens),
          table: fc.constantFrom('points', ...tokens),
          source: fc.oneof(fc.constantFrom(...layers.map((each) => each.datasource)), hostilePath(tokens)),
          layer: fc.constantFrom('points', ...tokens),
          crs: fc.constantFrom('EPSG:3857', ...tokens),
          mode: fc.constantFrom('create', 'overwrite', 'append'),
        },
        { requiredKeys: ['service', 'schema', 'table', 'source'] },
      ),
    },
  };
}

/** A request to one operation, as generated. */
interface Generated {
  segments: Record<string, string>;
  query: string;
  body: BodySpec;
}

function target(operation: Operation, generated: Generated): string {
  return (
    operation.template.replace(/\{([\w*]+)\}/g, (_, name: string) => generated.segments[name] ?? '') + generated.query
  );
}

function describeRequest(sent: RawRequest): string {
  const body =
    sent.body === undefined
      ? ''
      : ` ${sent.contentType ?? '(no content type)'} ${JSON.stringify(sent.body.slice(0, 300))}`;
  return `${sent.method} ${sent.target.slice(0, 300)}${body}`;
}

/** The error contract (docs/errors.md) for any reply: no 5xx, errors as `{"error": "<sentence>", "code": "<code>"}`. */
function checkReply(sent: RawRequest, reply: RawReply): void {
  const where = `${describeRequest(sent)}\n  -> ${reply.status} ${reply.text.slice(0, 500)}`;
  assert.ok(reply.status < 500, `server error: ${where}`);
  if (reply.status < 400) return;
  assert.match(reply.contentType, /^application\/json/, where);
  const body = JSON.parse(reply.text) as unknown;
  assert.ok(typeof body === 'object' && body !== null, where);
  assert.deepEqual(Object.keys(body), ['error', 'code'], where);
  const { error: message, code } = body as { error: unknown; code: unknown };
  assert.ok(typeof message === 'string' && message.trim() !== '', where);
  assert.ok((ERROR_CODES as readonly unknown[]).includes(code), `a documented code: ${where}`);
}

/** What the fake monitoring plugin answers, so the instance routes have a real instance to read. */
const PLUGIN_ANSWERS: Record<string, unknown> = {
  metadata: {
    cache: { projects: [] },
    plugins: [],
    providers: [''],
    versions: { gdal: '3.6', python: '3.11', qt: '5.15', qgis: '3.22' },
  },
  logs: { lines: ['a <line> & more'] },
  stats: { count: 1, service: 'WMS', request: 'GetMap', project: META_PROJECT, duration: 3 },
  projects: {
    projects: [{ map: '/p/<a>.qgs', title: '', loaded: '2026-01-01T00:00:00+00:00', layers: 1, invalid_layers: ['x'] }],
  },
  about: {
    settings: { ini_file: '', values: [{ name: 'QGIS_SERVER_MAX_THREADS', value: -1, source: 'default' }] },
    fonts: ['DejaVu Sans'],
    process: {
      pid: 1,
      memory_bytes: 1,
      peak_memory_bytes: 1,
      uptime_seconds: 1,
      load: { '1m': 0, '5m': 0, '15m': 0 },
      cpus: 1,
    },
  },
  reload: { map: '/p.qgs', status: 'pending' },
};

/** Statuses that mean the request was turned away before the route's service did its work. */
const TURNED_AWAY = new Set([400, 404, 405, 413, 414, 415]);

/**
 * Routes whose work needs a service this app has not: a valid request is answered 404 by design.
 * The code exchange needs an OpenID provider; test/oidc.test.ts runs one.
 */
const NEEDS_A_PROVIDER = new Set(['POST /api/auth/token']);

describe('hostile requests to every route', () => {
  let sandbox: string;
  let previousCwd: string;
  let data: Fixtures;
  let cs: CacheStack;
  let plugin: FakePlugin;
  let operations: Operation[];
  let realValues: Record<string, string[]>;
  let tokens: string[];
  let untouched: Set<string>;
  let allowed: string[];
  let qgisTmp: string;
  const outcomes = new Map<string, number[]>();

  const api = (method: string, path: string, body?: unknown) => cs.stack.call(method, path, body);

  async function expectStatus(method: string, path: string, body: unknown, statuses: number[]): Promise<void> {
    const reply = await api(method, path, body);
    assert.ok(statuses.includes(reply.status), `${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }

  /** Ids of API tokens for the token routes to revoke. */
  async function madeTokens(): Promise<string[]> {
    const ids: string[] = [];
    for (let made = 0; made < 4; made++) {
      const reply = await api('POST', '/api/tokens', { name: `target ${made}`, roles: [] });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
      ids.push((reply.body as { id: string }).id);
    }
    return ids;
  }

  /** Projects, layers and styles the requests aim at; idempotent, so it also restores what DELETEs removed. */
  async function seed(): Promise<void> {
    const projects: Record<string, Array<{ type: string; name: string; datasource: string }>> = {
      alpha: [
        { type: 'raster', name: 'elevation', datasource: data.floatTiff },
        { type: 'raster', name: 'rgb', datasource: data.rgbTiff },
        { type: 'vector', name: 'polygons', datasource: `${data.geopackage}|layername=polygons` },
        { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` },
      ],
      beta: [],
      [META_PROJECT]: [{ type: 'vector', name: META_LAYER, datasource: `${data.geopackage}|layername=polygons` }],
    };
    for (const [project, layers] of Object.entries(projects)) {
      const base = `/api/projects/${percentEncode(project)}`;
      await expectStatus('POST', '/api/projects', { name: project, author: `author <&> of ${project}` }, [201, 409]);
      for (const layer of layers) await expectStatus('POST', `${base}/layers`, layer, [201, 409]);
      for (const style of [fillStyle('fill'), fillStyle(META_STYLE), grayStyle('gray'), rgbStyle('colours')]) {
        await expectStatus('POST', `${base}/styles`, style, [201, 409]);
      }
      const polygons = layers.find((layer) => layer.datasource.endsWith('polygons'));
      if (polygons)
        await expectStatus(
          'POST',
          `${base}/layers/${percentEncode(polygons.name)}/style`,
          { name: META_STYLE, current: true },
          [200],
        );
    }
  }

  /** The project's versions, newest first, and one that does not exist. */
  async function versionIds(project: string): Promise<string[]> {
    const { versions } = (await api('GET', `/api/projects/${project}/versions`)).body as {
      versions: Array<{ id: string }>;
    };
    return [...versions.map(({ id }) => id), 'missing'];
  }

  async function registeredInstance(): Promise<string> {
    return waitFor(
      'the fake plugin to register',
      async () => {
        const { servers } = (await api('GET', '/api/instances')).body as { servers: Array<{ id: string }> };
        return servers[0]?.id;
      },
      60_000,
    );
  }

  /** A queued job a process that is gone left in the store, so the job routes have a real id to act on. */
  async function leftJob(): Promise<string> {
    const gone = { pid: 2 ** 22 + 1, host: hostname() };
    const job = queuedJob('seed', { name: 'alpha', schema: 'public' }, {}, gone, false);
    await new FilesystemJobStore(cs.stack.projectsDir).insert(job);
    return job.id;
  }

  before(async () => {
    // TMPDIR and the working folder move into a sandbox, so any file a request makes there is seen.
    // QGIS Server keeps temporary files of its own (legends, styles) while it runs: not Steward's.
    qgisTmp = mkdtempSync(join(tmpdir(), 'steward-properties-qgis-'));
    sandbox = join(tmpdir(), `steward-properties-${process.pid}`);
    mkdirSync(join(sandbox, 'tmp'), { recursive: true });
    mkdirSync(join(sandbox, 'cwd'));
    mkdirSync(join(sandbox, 'outside'));
    process.env['TMPDIR'] = join(sandbox, 'tmp');
    // GDAL worker processes run from the sources through tsx here: its compile cache is not Steward's.
    process.env['TSX_DISABLE_CACHE'] = '1';
    previousCwd = process.cwd();
    process.chdir(join(sandbox, 'cwd'));
    // /vsis3/ paths fail at once against a closed port instead of waiting on AWS.
    process.env['AWS_ENDPOINT_URL'] = `http://127.0.0.1:${await freePort()}`;
    process.env['AWS_NO_SIGN_REQUEST'] = 'YES';
    // So does PostgreSQL service "steward" (an import gets as far as connecting: 422).
    const serviceFile = join(sandbox, 'pg_service.conf');
    writeFileSync(serviceFile, `[steward]\nhost=127.0.0.1\nport=${await freePort()}\ndbname=steward\n`);
    process.env['PGSERVICEFILE'] = serviceFile;

    data = makeFixtures();
    const monitoringPort = await freePort();
    const uploadRoot = join(data.dir, 'uploads');
    mkdirSync(uploadRoot);
    // QGIS Server runs Steward's plugin (its STEWARD service reads uploaded SLD), unconnected: the
    // fake plugin answers the monitoring port.
    const qgisEnv = { TMPDIR: qgisTmp, QGIS_PLUGINPATH: PLUGIN_PATH };
    cs = await startCacheStack({ dataRoots: [data.dir], uploadRoot, monitoringPort }, {}, { env: qgisEnv });
    plugin = await FakePlugin.connect(monitoringPort, hello(), ({ id, method }) => ({
      id,
      result: PLUGIN_ANSWERS[method],
    }));
    const instance = await registeredInstance();
    await seed();

    operations = await listedOperations(cs.stack.api.url);
    realValues = {
      project: ['alpha', 'beta', META_PROJECT, 'missing'],
      layer: ['elevation', 'rgb', 'polygons', 'points', META_LAYER, 'missing'],
      style: ['gray', 'fill', 'colours', META_STYLE, 'default', 'spare', 'missing'],
      name: ['Viridis', 'Blues', 'missing'],
      field: ['name', 'fid', 'missing'],
      instance: [instance, 'missing'],
      id: [await leftJob(), randomUUID(), 'missing', ...(await madeTokens())],
      role: ['viewer', 'missing'],
      '*': ['canonical.tif', 'alpha', 'missing.tif'],
      version: await versionIds('alpha'),
    };
    const escapes = [
      join(sandbox, 'outside', 'escape.tif'),
      join(sandbox, 'outside'),
      join(data.dir, '..', 'escape.tif'),
      join(tmpdir(), '..', 'escape.tif'),
    ];
    tokens = [
      ...escapes,
      data.dir,
      data.floatTiff,
      `${data.geopackage}|layername=../../x`,
      `${data.rgbTiff}|layername=points`,
      join(data.dir, `${'x'.repeat(250)}.tif`),
      join(data.dir, 'no-folder', 'x.tif'),
      `/vsis3/bucket/${'k'.repeat(300)}.tif`,
    ];
    allowed = [cs.stack.projectsDir, cs.configDir, data.dir];
    untouched = fileTree(sandbox, allowed);
  });

  after(async () => {
    plugin?.close();
    await cs?.stop();
    process.chdir(previousCwd);
    rmSync(sandbox, { recursive: true, force: true });
    rmSync(qgisTmp, { recursive: true, force: true });
  });

  function generated(operation: Operation, valid: ValidBody | undefined): fc.Arbitrary<Generated> {
    const segments = Object.fromEntries(
      operation.params.map((name) => [name, pathSegment(realValues[name] ?? [], tokens)]),
    );
    return fc.record({
      segments: fc.record(segments),
      query: queryString(['public', 'other', ''], tokens),
      body: operation.method === 'GET' ? fc.constant({}) : bodyOf(valid),
    });
  }

  /** Bodies for a route: JSON ones, and for a route that takes another type, its documents too. */
  function bodyOf(valid: ValidBody | undefined): fc.Arbitrary<BodySpec> {
    const { contentType } = valid ?? {};
    if (valid === undefined || contentType === undefined) return requestBody(valid?.arbitrary, tokens);
    const documents = valid.arbitrary.map((body): BodySpec => ({ contentType, body: documentBody(body) }));
    return fc.oneof({ weight: 1, arbitrary: requestBody(undefined, tokens) }, { weight: 3, arbitrary: documents });
  }

  /** The query a route needs before its own work runs, for the routes that require one. */
  const VIEW_QUERY = 'layers=elevation&bbox=-180,-90,180,90&crs=EPSG:4326&width=64&height=64';
  const canonicalQueries: Record<string, () => string> = {
    'GET /api/datasources/files': () => `?path=${encodeURIComponent(data.dir)}`,
    'GET /api/datasources/postgres': () => '?service=steward',
    'GET /api/projects/{project}/versions/{version}/diff': () => `?to=${realValues['version']?.[1] ?? 'missing'}`,
    'GET /api/projects/{project}/wms': () => `?${VIEW_QUERY}`,
    'GET /api/projects/{project}/feature-info': () => `?${VIEW_QUERY}&i=32&j=32`,
    'POST /api/projects/{project}/layers/{layer}/style-preview': () => `?${VIEW_QUERY}`,
  };

  /** The first run of each route: real names, its required query, the valid body, so every route's own work runs. */
  function canonical(operation: Operation, valid: ValidBody | undefined): Generated {
    const segments = Object.fromEntries(
      operation.params.map((name) => [name, percentEncode(realValues[name]?.[0] ?? 'x')]),
    );
    const body: BodySpec =
      valid === undefined || operation.method === 'GET'
        ? {}
        : valid.contentType === undefined
          ? { contentType: 'application/json', body: JSON.stringify(valid.example) }
          : { contentType: valid.contentType, body: documentBody(valid.example) };
    return { segments, query: canonicalQueries[key(operation)]?.() ?? '', body };
  }

  async function send(operation: Operation, request: Generated): Promise<void> {
    const sent: RawRequest = { method: operation.method, target: target(operation, request), ...request.body };
    const reply = await rawRequest(cs.stack.api.url, sent);
    outcomes.set(key(operation), [...(outcomes.get(key(operation)) ?? []), reply.status]);
    checkReply(sent, reply);
  }

  // Every run of every route, rendering ones included, on a machine however loaded.
  const allRuns = { timeout: 20 * 60_000 };

  it('answers every listed route and method without a 5xx, errors as {"error": string}', allRuns, async (t) => {
    t.diagnostic(`seed ${SEED}, ${RUNS} runs per route, ${operations.length} routes`);
    const valid = validBodies(data, tokens);
    const failures: string[] = [];
    for (const operation of operations) {
      const body = valid[key(operation)];
      const started = Date.now();
      const property = fc.asyncProperty(generated(operation, body), (request) => send(operation, request));
      const details = await fc.check(property, {
        seed: SEED,
        numRuns: RUNS,
        endOnFailure: true,
        examples: [[canonical(operation, body)]],
      });
      if (details.failed)
        failures.push(`${key(operation)}: ${fc.defaultReportMessage(details)}\n${String(details.errorInstance)}`);
      if (operation.method === 'DELETE')
        await seed().catch((error: Error) => failures.push(`seeding after ${key(operation)}: ${error.message}`));
      // Deleting a project deletes its versions: the next routes are given the new ones.
      realValues['version'] = await versionIds('alpha');
      const statuses = outcomes.get(key(operation)) ?? [];
      t.diagnostic(
        `${key(operation)}: ${statuses.length} requests in ${Date.now() - started} ms, statuses ${[...new Set(statuses)].sort().join(' ')}`,
      );
    }
    if (failures.length > 0) assert.fail(failures.join('\n\n'));
    for (const operation of operations) {
      const statuses = outcomes.get(key(operation)) ?? [];
      assert.ok(statuses.length > 0, `${key(operation)} was not exercised`);
      assert.ok(
        NEEDS_A_PROVIDER.has(key(operation)) || statuses.some((status) => !TURNED_AWAY.has(status)),
        `${key(operation)} never got past validation: ${statuses.join(' ')}`,
      );
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined, 'Object.prototype is not polluted');
  });

  it('refuses every listed route and method without the token, however its path is spelt', async (t) => {
    // The same services behind an app of their own that needs a token.
    const guarded = await buildApp(pino({ level: 'silent' }), apiRoutes(cs.stack.api.services, consoleBuildDir()), {
      apiToken: 'the guarded token',
    });
    await guarded.listen({ host: '127.0.0.1', port: 0 });
    const address = guarded.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const valid = validBodies(data, tokens);
    const failures: string[] = [];
    let sent = 0;
    const protectedOperations = operations.filter(({ method, template }) => !isOpenRoute(method, template));
    try {
      for (const operation of [...protectedOperations, { method: 'GET', template: '/metrics', params: [] }]) {
        const requests = generated(operation, valid[key(operation)]);
        const property = fc.asyncProperty(requests, fc.nat(), async (request, pick) => {
          const path = target(operation, { ...request, query: '' });
          const forms = [path, ...disguisedPaths(path)];
          const form = forms[pick % forms.length] ?? path;
          const sentRequest: RawRequest = { method: operation.method, target: form + request.query, ...request.body };
          const reply = await rawRequest(url, sentRequest);
          sent++;
          const where = `${describeRequest(sentRequest)}\n  -> ${reply.status} ${reply.text.slice(0, 200)}`;
          // A path the router cannot decode (400) or too long (414) is refused before any route.
          assert.ok([400, 401, 404, 414].includes(reply.status), `answered without the token: ${where}`);
          checkReply(sentRequest, reply);
        });
        const details = await fc.check(property, { seed: SEED, numRuns: Math.ceil(RUNS / 5), endOnFailure: true });
        if (details.failed) failures.push(`${key(operation)}: ${fc.defaultReportMessage(details)}`);
      }
    } finally {
      await guarded.close();
    }
    t.diagnostic(`${sent} requests without the token, ${protectedOperations.length + 1} routes`);
    if (failures.length > 0) assert.fail(failures.join('\n\n'));
  });

  describe('examples the properties found', () => {
    const errorBody = (reply: { status: number; body: unknown }): void => {
      assert.deepEqual(Object.keys(reply.body as object), ['error', 'code'], JSON.stringify(reply.body));
      assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
    };

    it('answers malformed percent-encoding and over-long path parameters with an error body', async () => {
      for (const [path, status] of [
        ['/api/projects/%zz', 400],
        ['/api/projects/%C0%AE', 400],
        [`/api/projects/${'x'.repeat(1001)}`, 414],
      ] as const) {
        const reply = await api('GET', path);
        assert.equal(reply.status, status, path);
        errorBody(reply);
      }
    });

    it('takes names up to 200 bytes, however the cache encodes them, and refuses longer ones', async () => {
      for (const name of [`${'%'.repeat(199)}!`, `${'é'.repeat(99)}ab`]) {
        assert.equal((await api('POST', '/api/projects', { name, author: 'a' })).status, 201, name);
        assert.deepEqual((await api('GET', `/api/projects/${percentEncode(name)}/cache`)).body, {
          valid: true,
          storage: 'filesystem',
        });
      }
      const long = await api('POST', '/api/projects', { name: 'x'.repeat(201), author: 'a' });
      assert.equal(long.status, 400);
      errorBody(long);
    });

    it('refuses names and authors QGIS cannot keep as given', async () => {
      const attempts: Array<[string, unknown]> = [
        ['/api/projects', { name: 'half \ud800 pair', author: 'a' }],
        ['/api/projects', { name: 'not \uffff xml', author: 'a' }],
        ['/api/projects', { name: 'bad-author', author: 'bell \u0007' }],
        ['/api/projects', { name: 'bad-author', author: 'not \ufffe xml' }],
        ['/api/projects/beta/layers', { type: 'raster', name: 'map 🗺', datasource: data.rgbTiff }],
        ['/api/projects/beta/layers', { type: 'raster', name: '\u0085', datasource: data.rgbTiff }],
        ['/api/projects/beta/styles', grayStyle('style 🗺')],
      ];
      for (const [path, body] of attempts) {
        const reply = await api('POST', path, body);
        assert.equal(reply.status, 400, JSON.stringify(body));
        errorBody(reply);
      }
      assert.ok(!((await api('GET', '/api/projects')).body as string[]).includes('bad-author'));
    });

    it('refuses datasource options QGIS would not read as the probe did, which would break the whole project', async () => {
      const attempts = [
        { type: 'raster', name: 'optioned', datasource: `${data.rgbTiff}|layername=points/proc/self/environ` },
        { type: 'raster', name: 'optioned', datasource: `${data.rgbTiff}|layerid=0` },
        { type: 'vector', name: 'optioned', datasource: `${data.geopackage}|layername=points|subset=nonsense` },
        { type: 'vector', name: 'optioned', datasource: `${data.geopackage}|layerid=first` },
      ];
      for (const body of attempts) {
        const reply = await api('POST', '/api/projects/beta/layers', body);
        assert.equal(reply.status, 400, body.datasource);
        errorBody(reply);
      }
      assert.equal((await api('GET', '/api/projects/beta/layers/optioned')).status, 404);
    });

    it('writes a calculator output whose name leaves no room for a work file name after it, and refuses a longer one', async () => {
      const calculate = (output: string) =>
        api('POST', '/api/processing/raster/calculator/alpha', { expression: 'elevation@1 * 2', output });
      const longest = join(data.dir, `${'x'.repeat(MAX_OWNED_TARGET_BYTES - '.tif'.length)}.tif`);
      assert.deepEqual(await calculate(longest), { status: 201, body: true });
      const tooLong = await calculate(join(data.dir, `${'x'.repeat(MAX_OWNED_TARGET_BYTES + 1 - '.tif'.length)}.tif`));
      assert.equal(tooLong.status, 400);
      errorBody(tooLong);
    });

    it('refuses to delete a default style, which new layers of its geometry would miss', async () => {
      await expectStatus('POST', '/api/projects/beta/styles/default', { name: 'fill', geometry: 'polygon' }, [200]);
      const refused = await api('DELETE', '/api/projects/beta/styles/fill');
      assert.equal(refused.status, 409);
      errorBody(refused);
      await expectStatus(
        'POST',
        '/api/projects/beta/layers',
        { type: 'vector', name: 'filled', datasource: `${data.geopackage}|layername=polygons` },
        [201, 409],
      );
      await expectStatus('POST', '/api/projects/beta/styles/default', { name: 'default', geometry: 'polygon' }, [200]);
    });
  });

  /** Jobs the requests started (seeding, imports) write files until they end: the files are judged after. */
  async function jobsEnded(): Promise<void> {
    await waitFor(
      'the jobs the requests started to end',
      async () => {
        const unfinished = await Promise.all(
          ['queued', 'running'].map(async (state) => (await api('GET', `/api/jobs?state=${state}`)).body as unknown[]),
        );
        return unfinished.every((jobs) => jobs.length === 0);
      },
      300_000,
      250,
    );
  }

  it('creates no file outside the projects, MapProxy and data folders, and leaves no temporary file inside', async () => {
    await jobsEnded();
    const { added, removed } = treeChanges(untouched, fileTree(sandbox, allowed));
    assert.deepEqual({ added, removed }, { added: [], removed: [] });
    for (const folder of allowed) assert.deepEqual(leftovers(folder), [], folder);
  });

  it('leaves every project readable through the API and loadable by QGIS Server', async () => {
    const projects = (await api('GET', '/api/projects')).body as string[];
    const folders = readdirSync(cs.stack.projectsDir).filter((name) => !name.startsWith('.'));
    assert.deepEqual([...folders].sort(), [...projects].sort(), 'every project folder holds a whole project');
    for (const project of projects) {
      const base = `/api/projects/${percentEncode(project)}`;
      const info = await api('GET', base);
      assert.equal(info.status, 200, `${project}: ${JSON.stringify(info.body)}`);
      const layers = (await api('GET', `${base}/layers`)).body as string[];
      const published = await publishedLayers(cs.stack.qgis, cs.qgsFile(project));
      assert.deepEqual([...published].sort(), [...layers].sort(), `QGIS Server publishes every layer of ${project}`);
      const cache = await api('GET', `${base}/cache`);
      assert.deepEqual(cache, { status: 200, body: { valid: true, storage: 'filesystem' } }, project);
    }
    assert.deepEqual(projectProblems(cs.stack.qgis), []);
  });

  it('keeps names with XML metacharacters as they were given', async () => {
    const base = `/api/projects/${percentEncode(META_PROJECT)}`;
    assert.ok(((await api('GET', '/api/projects')).body as string[]).includes(META_PROJECT));
    assert.equal(((await api('GET', base)).body as { author: string }).author, `author <&> of ${META_PROJECT}`);
    assert.ok(((await api('GET', `${base}/layers`)).body as string[]).includes(META_LAYER));
    // The properties may have made another style current since the seed.
    await expectStatus(
      'POST',
      `${base}/layers/${percentEncode(META_LAYER)}/style`,
      { name: META_STYLE, current: true },
      [200],
    );
    const layer = (await api('GET', `${base}/layers/${percentEncode(META_LAYER)}`)).body as {
      name: string;
      current_style: string;
    };
    assert.equal(layer.name, META_LAYER);
    assert.equal(layer.current_style, META_STYLE);
    assert.ok(((await api('GET', `${base}/styles`)).body as string[]).includes(META_STYLE));
    // The properties may have replaced the style with a QML document; either kind describes itself as QML.
    const qml = await fetch(`${cs.stack.api.url}${base}/styles/${percentEncode(META_STYLE)}/qml`);
    assert.equal(qml.status, 200);
    assert.match(await qml.text(), /<qgis[ >]/);
    assert.ok((await publishedLayers(cs.stack.qgis, cs.qgsFile(META_PROJECT))).includes(META_LAYER));
  });
});
