/**
 * Property test of the roles QGIS Server enforces, on the production stack (nginx's auth_request to
 * Steward, the plugin's access filter in each qgis_mapserv.fcgi): random roles (layers hidden,
 * attributes hidden, feature filters with the identity's name and roles, services refused) and a
 * token of some of them, then OWS requests of every kind with random layers, points and features.
 *
 * Each run's answers are judged against what the roles grant, worked out here from the data: no
 * hidden layer name, hidden attribute name or value of a feature the role may not see appears in
 * any document; images (GetMap, GetLegendGraphic, GetPrint, WMTS tiles) and coverages equal those
 * the same QGIS Server draws from a reference project holding only what the role may see (hidden
 * layers removed, the features it may see kept by a subset string); features and attributes
 * served are exactly those allowed; and everything allowed is served.
 *
 * A fixed number of runs (STEWARD_PROPERTY_RUNS, default 30); the seed is printed, and
 * STEWARD_PROPERTY_SEED=<seed> runs the same roles and requests again.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';

import { OWS_SERVICES } from '../src/access/records.js';
import { apiCall } from './support/http.js';
import { PLUGIN_PATH } from './support/insight-stack.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels } from './support/png.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack } from './support/stack.js';

const SEED = Number(process.env['STEWARD_PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env['STEWARD_PROPERTY_RUNS'] ?? 30);
const ADMIN = 'the bootstrap administrator of the OWS access property test';

const VECTORS = ['parcels', 'wells', 'zones'] as const;
const RASTER = 'relief';
const LAYERS = [...VECTORS, RASTER] as const;
type Vector = (typeof VECTORS)[number];
type LayerName = (typeof LAYERS)[number];
/** The roles, and the values of each layer's `team` attribute that `@steward_roles` is matched with. */
const ROLES = ['north', 'south', 'east'] as const;
type RoleName = (typeof ROLES)[number];
/** The identities' names, and the values of each layer's `owner` attribute. */
const OWNERS = ['ann', 'bob', 'cat'] as const;
const FIELDS = ['code', 'kind', 'owner', 'team', 'size'] as const;
type Field = (typeof FIELDS)[number];
const COLOURS: Record<Vector, string> = { parcels: '220,40,40,255', wells: '40,160,40,255', zones: '40,40,220,255' };
const FIDS = [1, 2, 3, 4];
/** CRS:84, 10 pixels a degree: layer i's features are the squares of row y = i. */
const VIEW = 'VERSION=1.3.0&STYLES=&CRS=CRS:84&BBOX=0,0,4,4&WIDTH=40&HEIGHT=40&TRANSPARENT=TRUE';
/** The EPSG:4326 tile of the default WMTS grid at level 5 that holds the extent 0,0,4,4. */
const TILE = 'TILEMATRIXSET=EPSG:4326&TILEMATRIX=5&TILEROW=15&TILECOL=32';

interface Feature {
  fid: number;
  code: string;
  kind: string;
  owner: string;
  team: string;
  size: number;
}

/** The data: four features a layer, each attribute's value drawn from its fid and layer. */
function featuresOf(layer: Vector): Feature[] {
  const index = VECTORS.indexOf(layer);
  return FIDS.map((fid) => ({
    fid,
    code: `code-${layer}-${fid}`,
    kind: (fid + index) % 2 === 1 ? 'public' : 'private',
    owner: OWNERS[(fid + index) % OWNERS.length] ?? 'ann',
    team: ROLES[(2 * fid + index) % ROLES.length] ?? 'north',
    size: 10 * fid + index,
  }));
}

const attribute = (layer: Vector, field: Field): string => `${layer}_${field}`;

type Filter =
  | { on: 'kind'; value: string }
  | { on: 'size'; above: number }
  | { on: 'code'; not: number } // "code" <> the code of feature `not`
  | { on: 'owner' } // "owner" = @steward_user
  | { on: 'team' }; // "team" is one of @steward_roles

interface LayerRule {
  read: boolean;
  hidden: Field[];
  filter: Filter | undefined;
}

interface RoleSpec {
  access: 'none' | 'read' | 'write';
  layers: Record<Vector, LayerRule>;
  raster: boolean;
  refused: string[];
}

interface Scenario {
  roles: Record<RoleName, RoleSpec>;
  token: { name: string; roles: RoleName[] };
  map: LayerName[];
  print: LayerName[];
  click: { layer: Vector; fid: number };
  layer: Vector;
  legend: LayerName;
  tile: LayerName;
}

const filterArbitrary: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({ on: fc.constant('kind' as const), value: fc.constantFrom('public', 'private') }),
  fc.record({ on: fc.constant('size' as const), above: fc.integer({ min: 5, max: 45 }) }),
  fc.record({ on: fc.constant('code' as const), not: fc.constantFrom(...FIDS) }),
  fc.record({ on: fc.constant('owner' as const) }),
  fc.record({ on: fc.constant('team' as const) }),
);
const ruleArbitrary: fc.Arbitrary<LayerRule> = fc.record({
  read: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  hidden: fc.oneof(fc.constant([] as Field[]), fc.subarray([...FIELDS], { minLength: 1, maxLength: 2 })),
  filter: fc.option(filterArbitrary, { freq: 2, nil: undefined }),
});
const roleArbitrary: fc.Arbitrary<RoleSpec> = fc.record({
  access: fc.oneof(
    { weight: 1, arbitrary: fc.constant('none' as const) },
    { weight: 4, arbitrary: fc.constant('read' as const) },
    { weight: 2, arbitrary: fc.constant('write' as const) },
  ),
  layers: fc.record({ parcels: ruleArbitrary, wells: ruleArbitrary, zones: ruleArbitrary }),
  raster: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  refused: fc.oneof(
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.subarray([...OWS_SERVICES] as string[], { minLength: 1, maxLength: 3 }) },
  ),
});
const someLayers = fc.shuffledSubarray([...LAYERS], { minLength: 1 });
const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  roles: fc.record({ north: roleArbitrary, south: roleArbitrary, east: roleArbitrary }),
  token: fc.record({
    name: fc.constantFrom(...OWNERS),
    roles: fc.subarray([...ROLES], { minLength: 1 }),
  }),
  map: someLayers,
  print: someLayers,
  click: fc.record({ layer: fc.constantFrom(...VECTORS), fid: fc.constantFrom(...FIDS) }),
  layer: fc.constantFrom(...VECTORS),
  legend: fc.constantFrom(...LAYERS),
  tile: fc.constantFrom(...LAYERS),
});

/** A role as Steward takes it (`PUT /api/roles/{role}`). */
function roleBody(role: RoleSpec): unknown {
  const layers: Record<string, unknown> = role.raster ? {} : { [RASTER]: { read: false } };
  for (const layer of VECTORS) {
    const rule = role.layers[layer];
    layers[layer] = rule.read
      ? {
          ...(rule.hidden.length > 0 && { hidden_attributes: rule.hidden.map((field) => attribute(layer, field)) }),
          ...(rule.filter !== undefined && { filter: expression(layer, rule.filter) }),
        }
      : { read: false };
  }
  return {
    projects: role.access === 'none' ? {} : { town: { access: role.access, layers } },
    services: Object.fromEntries(role.refused.map((service) => [service, false])),
  };
}

/** A filter as a QGIS expression with Steward's identity variables. */
function expression(layer: Vector, filter: Filter): string {
  const field = `"${attribute(layer, filter.on)}"`;
  switch (filter.on) {
    case 'kind':
      return `${field} = '${filter.value}'`;
    case 'size':
      return `${field} > ${filter.above}`;
    case 'code':
      return `${field} <> 'code-${layer}-${filter.not}'`;
    case 'owner':
      return `${field} = @steward_user`;
    case 'team':
      return `array_contains(@steward_roles, ${field})`;
  }
}

function passes(filter: Filter | undefined, feature: Feature, token: Scenario['token']): boolean {
  if (filter === undefined) return true;
  switch (filter.on) {
    case 'kind':
      return feature.kind === filter.value;
    case 'size':
      return feature.size > filter.above;
    case 'code':
      return feature.fid !== filter.not;
    case 'owner':
      return feature.owner === token.name;
    case 'team':
      return (token.roles as string[]).includes(feature.team);
  }
}

/** What a scenario's token may be served, worked out from the roles as docs/access.md says. */
interface Granted {
  project: boolean;
  write: boolean;
  service(name: string): boolean;
  readable(layer: LayerName): boolean;
  hidden(layer: Vector): Field[];
  features(layer: Vector): Feature[];
}

function granted(scenario: Scenario): Granted {
  const mine = scenario.token.roles.map((name) => scenario.roles[name]);
  const granting = mine.filter((role) => role.access !== 'none');
  const readers = (layer: Vector) => granting.filter((role) => role.layers[layer].read);
  const service = (name: string) => mine.some((role) => !role.refused.includes(name));
  return {
    project: granting.length > 0,
    write: granting.some((role) => role.access === 'write') && service('WFS') && service('WFS-T'),
    service,
    readable: (layer) => (layer === RASTER ? granting.some((role) => role.raster) : readers(layer).length > 0),
    hidden: (layer) =>
      FIELDS.filter((field) => readers(layer).every((role) => role.layers[layer].hidden.includes(field))),
    features: (layer) =>
      featuresOf(layer).filter((feature) =>
        readers(layer).some((role) => passes(role.layers[layer].filter, feature, scenario.token)),
      ),
  };
}

/** The attributes served of a feature: every field but the hidden ones, and the GeoPackage's fid. */
function served(layer: Vector, feature: Feature, hidden: Field[]): Record<string, unknown> {
  const shown = FIELDS.filter((field) => !hidden.includes(field));
  return { fid: feature.fid, ...Object.fromEntries(shown.map((field) => [attribute(layer, field), feature[field]])) };
}

/** The strings no document may hold: hidden layers' names, hidden attributes' names and values, unseen features' codes. */
function forbidden(grant: Granted): string[] {
  const words: string[] = LAYERS.filter((layer) => !grant.readable(layer));
  for (const layer of VECTORS.filter((each) => grant.readable(each))) {
    const hidden = grant.hidden(layer);
    words.push(...hidden.map((field) => attribute(layer, field)));
    const seen = new Set(grant.features(layer).map((feature) => feature.fid));
    for (const feature of featuresOf(layer)) {
      if (!seen.has(feature.fid) || hidden.includes('code')) words.push(feature.code);
    }
  }
  return words;
}

/** The reference project's layers: those readable, each with the subset of the features it may see. */
function referenceLayers(grant: Granted): Record<string, string> {
  const layers: Record<string, string> = {};
  for (const layer of VECTORS.filter((each) => grant.readable(each))) {
    const fids = grant.features(layer).map((feature) => feature.fid);
    layers[layer] = `fid IN (${fids.length > 0 ? fids.join(', ') : '-1'})`;
  }
  return layers;
}

type Answer = { status: number; type: string; body: Buffer; text: string };

describe('random roles enforced by QGIS Server on every kind of OWS request', () => {
  let stack: Stack;
  let scratch = '';
  let town = '';
  const scenarios = fc.sample(scenarioArbitrary, { seed: SEED, numRuns: RUNS });
  const references: string[] = [];

  const admin = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, method, path, body, ADMIN);

  /** A request through nginx to `map` (town's by default) with `token`, at QGIS Server's `path`. */
  const ows = async (
    token: string,
    query: string,
    options: { map?: string; path?: string; init?: RequestInit } = {},
  ): Promise<Answer> => {
    const url = new URL(options.path ?? '', stack.qgis.url);
    url.search = `MAP=${encodeURIComponent(options.map ?? town)}&${query}`;
    const headers = { authorization: `Bearer ${token}`, ...(options.init?.headers as object) };
    const response = await fetch(url, { ...options.init, headers });
    const body = Buffer.from(await response.arrayBuffer());
    return { status: response.status, type: response.headers.get('content-type') ?? '', body, text: body.toString() };
  };

  before(async () => {
    stack = await startStack(
      { apiToken: ADMIN, tokenFailures: 1000 },
      { env: { QGIS_PLUGINPATH: PLUGIN_PATH } },
      'filesystem',
    );
    mkdirSync(join(stack.projectsDir, 'town'));
    town = join(stack.projectsDir, 'town', 'town.qgs');
    scratch = mkdtempSync(join(tmpdir(), 'steward-access-properties-'));
    const projects = [{ output: town, layers: Object.fromEntries(VECTORS.map((layer) => [layer, ''])), raster: true }];
    scenarios.forEach((scenario, run) => {
      const grant = granted(scenario);
      references.push(join(scratch, `reference-${run}.qgs`));
      projects.push({ output: references[run] ?? '', layers: referenceLayers(grant), raster: grant.readable(RASTER) });
    });
    const spec = {
      gpkg: join(stack.projectsDir, 'town', 'town.gpkg'),
      raster_path: join(stack.projectsDir, 'town', 'relief.asc'),
      raster: RASTER,
      layers: VECTORS.map((layer) => ({
        name: layer,
        colour: COLOURS[layer],
        fields: FIELDS.map((field) => [attribute(layer, field), field === 'size' ? 'int' : 'string']),
        features: featuresOf(layer).map((feature) => ({
          x: feature.fid - 1,
          y: VECTORS.indexOf(layer),
          values: FIELDS.map((field) => feature[field]),
        })),
      })),
      projects,
    };
    writeFileSync(join(scratch, 'spec.json'), JSON.stringify(spec));
    runPyqgisScript('write_access_properties_projects.py', join(scratch, 'spec.json'));
  });
  after(async () => {
    await stack?.stop();
    if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
  });

  it(`serves each random role exactly what it may see (${RUNS} runs)`, async (t) => {
    t.diagnostic(`seed ${SEED} (STEWARD_PROPERTY_SEED=${SEED} runs these roles and requests again)`);
    const failures: string[] = [];
    for (const [run, scenario] of scenarios.entries()) {
      const problems = await judgeRun(scenario, references[run] ?? '');
      if (problems.length > 0) {
        failures.push(`run ${run}: ${JSON.stringify(scenario)}\n  ${problems.join('\n  ')}`);
      }
    }
    assert.deepEqual(failures, [], `seed ${SEED}:\n${failures.join('\n')}`);
  });

  /** Makes the scenario's roles and token, sends every kind of request, and says what was wrong. */
  async function judgeRun(scenario: Scenario, reference: string): Promise<string[]> {
    for (const role of ROLES) {
      const put = await admin('PUT', `/api/roles/${role}`, roleBody(scenario.roles[role]));
      assert.ok(put.status === 200 || put.status === 201, JSON.stringify(put.body));
    }
    const made = await admin('POST', '/api/tokens', scenario.token);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const token = (made.body as { token: string }).token;
    const grant = granted(scenario);
    const problems: string[] = [];
    const words = forbidden(grant);
    for (const request of requestsOf(scenario, grant)) {
      const answer = await ows(token, request.query, request.options);
      const label = `${request.kind} ${request.query}`;
      const allowed = grant.project && request.services.every((service) => grant.service(service));
      if (!allowed || request.refused) {
        if (answer.status === 200 && !/Exception/.test(answer.text))
          problems.push(`${label}: served, should be refused`);
        continue;
      }
      if (answer.status !== 200) {
        if (request.spared === true) continue;
        problems.push(`${label}: ${answer.status} ${answer.text.slice(0, 200)}`);
        continue;
      }
      if (!/^image\/|tiff/.test(answer.type)) {
        const leaked = words.filter((word) => answer.text.includes(word));
        if (leaked.length > 0) problems.push(`${label}: holds ${leaked.join(', ')}`);
      }
      const wrong = await request.check(answer, {
        reference,
        admin: (query, path) => ows(ADMIN, query, { map: reference, ...(path !== undefined && { path }) }),
      });
      if (wrong !== undefined) problems.push(`${label}: ${wrong}`);
    }
    return problems;
  }
});

interface Oracle {
  reference: string;
  /** The same request to the reference project, as the administrator. */
  admin(query: string, path?: string): Promise<Answer>;
}

interface OwsRequest {
  kind: string;
  query: string;
  options?: { path?: string; init?: RequestInit };
  /** The role services it is (nginx refuses it when every role refuses one). */
  services: string[];
  /** Whether the roles' layer rules refuse it. */
  refused: boolean;
  /** Whether QGIS Server may refuse it though the roles allow it (a refusal of too much). */
  spared?: boolean;
  /** What is wrong with an answer served; undefined when it is right. */
  check(answer: Answer, oracle: Oracle): Promise<string | undefined>;
}

/** The same image as the reference project's answer to `query`. */
function sameImage(query: string, path?: string) {
  return async (answer: Answer, oracle: Oracle): Promise<string | undefined> => {
    const expected = await oracle.admin(query, path);
    if (answer.type !== expected.type) return `a ${answer.type}, the reference a ${expected.type}`;
    if (!answer.type.startsWith('image/png')) {
      return answer.body.equals(expected.body) ? undefined : 'bytes differ from the reference';
    }
    const differing = differingPixels(decodePng(answer.body), decodePng(expected.body));
    return differing === 0 ? undefined : `${differing} pixels differ from the reference`;
  };
}

/** A document listing exactly the readable ones of `names` by `pattern`. */
function lists(names: readonly LayerName[], grant: Granted, pattern: (name: string) => string) {
  return async (answer: Answer): Promise<string | undefined> => {
    const wrong = names.filter((name) => answer.text.includes(pattern(name)) !== grant.readable(name));
    return wrong.length === 0 ? undefined : `lists wrongly ${wrong.join(', ')}`;
  };
}

/** Features of `layer` whose attributes are exactly those the role may see. */
function sameFeatures(layer: Vector, expected: Feature[], grant: Granted, read: (answer: Answer) => unknown[]) {
  return async (answer: Answer): Promise<string | undefined> => {
    const want = expected.map((feature) => served(layer, feature, grant.hidden(layer)));
    let got: unknown[];
    try {
      got = read(answer);
    } catch (error) {
      return `unreadable: ${(error as Error).message}: ${answer.text.slice(0, 200)}`;
    }
    try {
      assert.deepEqual(got, want);
      return undefined;
    } catch {
      return `features ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
    }
  };
}

const geojsonProperties = (answer: Answer): unknown[] =>
  (JSON.parse(answer.text) as { features: Array<{ properties: unknown }> }).features.map((each) => each.properties);

/** Every kind of OWS request, with the scenario's random layers and features. */
function requestsOf(scenario: Scenario, grant: Granted): OwsRequest[] {
  const hiddenIn = (layers: readonly LayerName[]) => layers.some((layer) => !grant.readable(layer));
  const map = `SERVICE=WMS&REQUEST=GetMap&FORMAT=image/png&${VIEW}&LAYERS=${scenario.map.join(',')}`;
  const click = scenario.click;
  const point = `I=${(click.fid - 1) * 10 + 5}&J=${35 - VECTORS.indexOf(click.layer) * 10}`;
  const info = `SERVICE=WMS&REQUEST=GetFeatureInfo&${VIEW}&LAYERS=${click.layer}&QUERY_LAYERS=${click.layer}&INFO_FORMAT=application/json&FEATURE_COUNT=10&${point}`;
  const clicked = grant.features(click.layer).filter((feature) => feature.fid === click.fid);
  const legend = `SERVICE=WMS&VERSION=1.3.0&REQUEST=GetLegendGraphic&LAYER=${scenario.legend}&FORMAT=image/png`;
  const print = `SERVICE=WMS&VERSION=1.3.0&REQUEST=GetPrint&TEMPLATE=sheet&FORMAT=png&DPI=50&CRS=EPSG:4326&map0:EXTENT=0,0,4,4&map0:LAYERS=${scenario.print.join(',')}`;
  const layer = scenario.layer;
  const feature = `SERVICE=WFS&VERSION=1.1.0&REQUEST=GetFeature&TYPENAME=${layer}&OUTPUTFORMAT=application/json`;
  const gml = `SERVICE=WFS&VERSION=1.1.0&REQUEST=GetFeature&TYPENAME=${layer}`;
  const describe = `SERVICE=WFS&VERSION=1.1.0&REQUEST=DescribeFeatureType&TYPENAME=${layer}`;
  const coverage = `SERVICE=WCS&VERSION=1.0.0&REQUEST=GetCoverage&COVERAGE=${RASTER}&CRS=EPSG:4326&BBOX=0,0,4,4&WIDTH=4&HEIGHT=4&FORMAT=GeoTIFF`;
  const tile = `SERVICE=WMTS&VERSION=1.0.0&REQUEST=GetTile&LAYER=${scenario.tile}&FORMAT=image/png&STYLE=&${TILE}`;
  const readable = !hiddenIn([layer]);
  return [
    {
      kind: 'WMS GetCapabilities',
      query: 'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities',
      services: ['WMS'],
      refused: false,
      check: lists(LAYERS, grant, (name) => `<Name>${name}</Name>`),
    },
    { kind: 'GetMap', query: map, services: ['WMS', 'GetMap'], refused: hiddenIn(scenario.map), check: sameImage(map) },
    {
      kind: 'GetFeatureInfo',
      query: info,
      services: ['WMS', 'GetFeatureInfo'],
      refused: hiddenIn([click.layer]),
      check: sameFeatures(click.layer, clicked, grant, geojsonProperties),
    },
    {
      kind: 'GetLegendGraphic',
      query: legend,
      services: ['WMS', 'GetLegendGraphic'],
      refused: hiddenIn([scenario.legend]),
      check: sameImage(legend),
    },
    {
      kind: 'GetPrint',
      query: print,
      services: ['WMS', 'GetPrint'],
      refused: hiddenIn(scenario.print),
      check: sameImage(print),
    },
    {
      kind: 'WFS GetCapabilities',
      query: 'SERVICE=WFS&VERSION=1.1.0&REQUEST=GetCapabilities',
      services: ['WFS'],
      refused: false,
      check: lists(VECTORS, grant, (name) => `<Name>${name}</Name>`),
    },
    {
      kind: 'DescribeFeatureType',
      query: describe,
      services: ['WFS'],
      refused: !readable,
      check: async (answer) => {
        const shown = FIELDS.filter((field) => !grant.hidden(layer).includes(field));
        const missing = shown.filter((field) => !answer.text.includes(`name="${attribute(layer, field)}"`));
        return missing.length === 0 ? undefined : `lacks ${missing.join(', ')}`;
      },
    },
    {
      kind: 'WFS GetFeature',
      query: feature,
      services: ['WFS'],
      refused: !readable,
      check: sameFeatures(layer, grant.features(layer), grant, geojsonProperties),
    },
    {
      kind: 'WFS GetFeature GML',
      query: gml,
      services: ['WFS'],
      refused: !readable,
      check: async (answer) => {
        const count = (answer.text.match(/<gml:featureMember>/g) ?? []).length;
        const want = grant.features(layer).length;
        return count === want ? undefined : `${count} features, expected ${want}`;
      },
    },
    {
      kind: 'WFS-T',
      query: 'SERVICE=WFS&VERSION=1.1.0&REQUEST=Transaction',
      options: {
        init: { method: 'POST', headers: { 'content-type': 'text/xml' }, body: deletion(layer) },
      },
      services: ['WFS', 'WFS-T'],
      refused: !readable || !grant.write,
      check: async (answer) =>
        /<totalDeleted>0<\/totalDeleted>/.test(answer.text) ? undefined : `not done: ${answer.text.slice(0, 300)}`,
    },
    {
      kind: 'WCS GetCapabilities',
      query: 'SERVICE=WCS&VERSION=1.0.0&REQUEST=GetCapabilities',
      services: ['WCS'],
      refused: false,
      check: lists([RASTER], grant, (name) => `<name>${name}</name>`),
    },
    {
      kind: 'WCS GetCoverage',
      query: coverage,
      services: ['WCS'],
      refused: !grant.readable(RASTER),
      check: sameImage(coverage),
    },
    {
      kind: 'WMTS GetCapabilities',
      query: 'SERVICE=WMTS&VERSION=1.0.0&REQUEST=GetCapabilities',
      services: ['WMTS'],
      refused: false,
      check: lists(LAYERS, grant, (name) => `<ows:Identifier>${name}</ows:Identifier>`),
    },
    {
      kind: 'WMTS GetTile',
      query: tile,
      services: ['WMTS'],
      refused: hiddenIn([scenario.tile]),
      check: sameImage(tile),
    },
    {
      kind: 'OAPIF collections',
      query: '',
      options: { path: 'wfs3/collections.json' },
      services: ['OAPIF'],
      refused: false,
      // QGIS Server 3.22 answers the whole list 404 when one layer is hidden (it checks each
      // layer where later releases skip it): a refusal of too much, never a leak.
      spared: VECTORS.some((each) => !grant.readable(each)),
      check: lists(VECTORS, grant, (name) => `"id":"${name}"`),
    },
    {
      kind: 'OAPIF items',
      query: '',
      options: { path: `wfs3/collections/${layer}/items.json` },
      services: ['OAPIF'],
      refused: !readable,
      check: sameFeatures(layer, grant.features(layer), grant, geojsonProperties),
    },
  ];
}

/** A WFS 1.1.0 deletion of a feature that does not exist: allowed or not, it changes nothing. */
function deletion(layer: Vector): string {
  return `<wfs:Transaction service="WFS" version="1.1.0" xmlns:wfs="http://www.opengis.net/wfs"
 xmlns:ogc="http://www.opengis.net/ogc"><wfs:Delete typeName="${layer}"><ogc:Filter>
 <ogc:FeatureId fid="${layer}.99"/></ogc:Filter></wfs:Delete></wfs:Transaction>`;
}
