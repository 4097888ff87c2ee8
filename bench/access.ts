/**
 * What access control costs (issue 41's targets), with 10,000 tokens, 100 roles and 1,000 layer rules:
 * - `check`: the API's own check of a request (the token's identity, then the route's policy, and
 *   for nginx's auth_request the rules compiled for QGIS Server), timed in process; target 50 µs.
 * - `nginx`: a GetMap through nginx with auth_request (access control on) against the same GetMap
 *   through nginx without it, each a stack of its own, in blocks taking turns; target 0.3 ms.
 * - `filter`: the instructions the plugin's access filter adds to a GetMap, counted by callgrind as
 *   the plugin's bench counts them, the rules of some or all of the 100 roles against none; target 1%.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { FilesystemAccessStore } from '../src/access/filesystem-access.js';
import { OWS_ACCESS_PARAMETER, owsAccessValue } from '../src/access/ows-rules.js';
import { Permissions } from '../src/access/permissions.js';
import { type LayerRule, type RoleDefinition } from '../src/access/records.js';
import { AccessService, type Identity } from '../src/access/service.js';
import { hashSecret, newToken } from '../src/access/token-secret.js';
import { qgisRequestSettings } from '../src/config.js';
import { authorizeRoute } from '../src/http/access-policy.js';
import { TokenGate } from '../src/http/auth.js';
import { OWS_ACCESS_HEADER } from '../src/http/ows-access.js';
import { freePort } from '../src/runtime/ports.js';
import { type QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { PLUGIN_PATH } from '../test/support/insight-stack.js';
import { runPyqgisScript } from '../test/support/pyqgis-scripts.js';
import { type Stack, startStack, startTestPool } from '../test/support/stack.js';
import { descendants, threadsCpuNanoseconds } from './cpu.js';
import { send } from './http-client.js';
import { CountedServer } from './instructions.js';
import { type PartFilter } from './parts.js';
import { median, quartiles, ratios, spread, table } from './stats.js';

export const ACCESS_PARTS = ['check', 'nginx', 'filter'] as const;

const TOKENS = 10_000;
const ROLES = 100;
const RULES_PER_ROLE = 10;
/** The roles a bench identity holds: its rules for a project are those of all of them. */
const ROLES_HELD = 10;
const CHECK_ROUNDS = 7;
const CHECKS_PER_ROUND = 20_000;
const CHECK_TARGET_US = 50;
const NGINX_ROUNDS = 40;
const MAPS_PER_BLOCK = 20;
const WARM_UP_MAPS = 20;
const NGINX_TARGET_MS = 0.3;
const ADMIN = 'the bootstrap administrator of the access bench';
const PROJECT = 'town';

/**
 * Role i: read of the project, and rules on the same ten layers as every other role, so that an
 * identity of many roles is sent them all (each layer's filters joined by OR): the project's
 * `roads` with an attribute of its own hidden and a filter of its own, which every feature passes
 * (the maps are those of no rules, and the filter is evaluated for each); its `secret` unreadable;
 * eight layers the project does not have, likewise.
 */
function role(index: number): RoleDefinition {
  const filtered: LayerRule = {
    hidden_attributes: [`owner_${index}`],
    filter: `"owner" <> 'owner_${index}' OR "owner" = @steward_user`,
  };
  const layers: Record<string, LayerRule> = { roads: filtered, secret: { read: false } };
  for (let rule = 2; rule < RULES_PER_ROLE; rule++) layers[`layer_${rule}`] = filtered;
  return { projects: { [PROJECT]: { access: 'read', layers } } };
}

const roleName = (index: number): string => `role-${index}`;
const heldIndexes = (): number[] => Array.from({ length: ROLES_HELD }, (_, index) => index * 9);
const heldRoles = (): string[] => heldIndexes().map(roleName);

/** A store of TOKENS tokens (one of them `token`, the others unguessable) and ROLES roles. */
async function filledStore(projectsDir: string): Promise<{ store: FilesystemAccessStore; token: string }> {
  const store = new FilesystemAccessStore(projectsDir);
  for (let index = 0; index < ROLES; index++) await store.putRole(roleName(index), role(index));
  const created = new Date().toISOString();
  const measured = newToken();
  const hash = await hashSecret(measured.token);
  // Every other token gets a hash of its own secret's form, never computed: they are only looked past.
  for (let batch = 0; batch < TOKENS; batch += 500) {
    const ids = Array.from({ length: 500 }, (_, index) => (batch + index === 0 ? measured : newToken()).id);
    await Promise.all(
      ids.map((id, index) =>
        store.addToken({ id, name: `user-${batch + index}`, roles: heldRoles(), created, expires: null, hash }),
      ),
    );
  }
  return { store, token: measured.token };
}

/** Microseconds a request of the API's check takes, round by round: identity, policy, and the OWS rules. */
async function apiCheck(): Promise<string> {
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-bench-access-'));
  const { store, token } = await filledStore(projectsDir);
  const access = new AccessService(ADMIN, store);
  await access.start();
  try {
    const gate = new TokenGate(access, 100);
    const authorization = `Bearer ${token}`;
    const first = await gate.identify(authorization, '127.0.0.1');
    if (!('permissions' in first)) throw first;
    const ref = { name: PROJECT, schema: 'public' };
    const route = {
      method: 'GET',
      url: '/api/projects/:project/layers/:layer',
      params: { project: PROJECT, layer: 'roads' },
      query: {},
    };
    const kinds = {
      'identity and route policy': async () => {
        const identity = (await gate.identify(authorization, '127.0.0.1')) as Identity;
        authorizeRoute(identity, route);
      },
      "nginx's check: identity and the OWS rules": async () => {
        const identity = (await gate.identify(authorization, '127.0.0.1')) as Identity;
        owsAccessValue(identity, ref, `/projects/${PROJECT}/${PROJECT}.qgs`);
      },
    };
    const rounds = new Map<string, { cpu: number[]; wall: number[] }>(
      Object.keys(kinds).map((kind) => [kind, { cpu: [], wall: [] }]),
    );
    for (let round = 0; round < CHECK_ROUNDS; round++) {
      for (const [kind, work] of Object.entries(kinds)) {
        const started = performance.now();
        const cpu = process.cpuUsage();
        for (let check = 0; check < CHECKS_PER_ROUND; check++) await work();
        const used = process.cpuUsage(cpu);
        rounds.get(kind)?.cpu.push((used.user + used.system) / CHECKS_PER_ROUND);
        rounds.get(kind)?.wall.push(((performance.now() - started) * 1000) / CHECKS_PER_ROUND);
      }
    }
    const rules = owsAccessValue(first, ref, `/projects/${PROJECT}/${PROJECT}.qgs`);
    const rows = [...rounds].map(([kind, { cpu, wall }]) => [
      kind,
      `${median(cpu).toFixed(1)} (${spread(cpu, 1)})`,
      `${median(wall).toFixed(1)} (${spread(wall, 1)})`,
      median(cpu) <= CHECK_TARGET_US ? 'met' : 'not met',
    ]);
    return [
      `### The API's check of a request (target: at most ${CHECK_TARGET_US} µs with ${TOKENS.toLocaleString('en')} tokens)`,
      `- In process: a token (verified once by its slow hash, then by SHA-256 while in use, as a client's next requests are) among ${TOKENS.toLocaleString('en')} stored, holding ${ROLES_HELD} of ${ROLES} roles of ${RULES_PER_ROLE} layer rules each (${ROLES * RULES_PER_ROLE} rules); ${CHECK_ROUNDS} rounds of ${CHECKS_PER_ROUND.toLocaleString('en')} checks; µs a check, median (lowest to highest round): the CPU time of this process (the target's figure, which the machine's other load does not add to), and the wall time`,
      `- The rules nginx hands QGIS Server for the project: ${rules.length.toLocaleString('en')} characters`,
      '',
      table(['check', 'CPU µs a request', 'wall µs a request', `target ${CHECK_TARGET_US} µs`], rows),
    ].join('\n');
  } finally {
    await access.close();
    rmSync(projectsDir, { recursive: true, force: true });
  }
}

/** The bench project (a GeoPackage of polygons) in `stack`'s folder; its MAP value. */
function benchProject(stack: Stack): string {
  const folder = join(stack.projectsDir, PROJECT);
  mkdirSync(folder);
  const map = join(folder, `${PROJECT}.qgs`);
  runPyqgisScript('write_access_project.py', map);
  return map;
}

const GET_MAP =
  'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=roads,secret&STYLES=&CRS=CRS:84&BBOX=0,0,4,4&WIDTH=64&HEIGHT=64&FORMAT=image/png';

/** The PNG of one GetMap through a pool's nginx, sent `token`'s way. */
async function fetchedMap(url: string, agent: Agent, token: string | undefined): Promise<Buffer> {
  const body = await send(
    url,
    'GET',
    agent,
    undefined,
    token === undefined ? {} : { authorization: `Bearer ${token}` },
  );
  if (body.subarray(1, 4).toString() !== 'PNG') throw new Error(`not a map: ${body.toString().slice(0, 200)}`);
  return body;
}

/** Milliseconds of one GetMap through a pool's nginx, sent `token`'s way. */
async function timedMap(url: string, agent: Agent, token: string | undefined): Promise<number> {
  const started = performance.now();
  await fetchedMap(url, agent, token);
  return performance.now() - started;
}

interface MapClient {
  name: string;
  url: string;
  agent: Agent;
  token: string | undefined;
  /** The processes of the nginx it goes through: master and workers. */
  nginx: number[];
  /** The client whose maps lack only the cost this one's add; none for the reference of all. */
  against?: string;
  /** Whether what it adds is auth_request's, which the target judges. */
  judged?: boolean;
}

/** One client's maps of a block: the median map, and the CPU a map of its nginx and of this process. */
interface Block {
  ms: number;
  nginxUs: number;
  processUs: number;
}

/**
 * A block: MAPS_PER_BLOCK maps of each client, taking turns map by map (who goes first turned by
 * one each map), so that every client meets the same moments of the machine's load and a
 * difference between two clients is what one adds, not when it ran. CPU time from each thread's
 * schedstat, read around each map, which the machine's other load does not add to: this
 * process's (the client and the API) and the client's nginx's, not QGIS Server's (its maps cost
 * some hundred times more; the filter part counts its cost of the rules).
 */
async function mapBlock(clients: MapClient[]): Promise<Block[]> {
  const times = clients.map(() => [] as number[]);
  const nginxNs = clients.map(() => 0);
  const processNs = clients.map(() => 0);
  for (let map = 0; map < MAPS_PER_BLOCK; map++) {
    for (let turn = 0; turn < clients.length; turn++) {
      const index = (map + turn) % clients.length;
      const client = clients[index] as MapClient;
      const nginxBefore = threadsCpuNanoseconds(client.nginx);
      const processBefore = threadsCpuNanoseconds([process.pid]);
      times[index]?.push(await timedMap(client.url, client.agent, client.token));
      processNs[index] = (processNs[index] ?? 0) + threadsCpuNanoseconds([process.pid]) - processBefore;
      nginxNs[index] = (nginxNs[index] ?? 0) + threadsCpuNanoseconds(client.nginx) - nginxBefore;
    }
  }
  return clients.map((_, index) => ({
    ms: median(times[index] ?? []),
    nginxUs: (nginxNs[index] ?? 0) / MAPS_PER_BLOCK / 1000,
    processUs: (processNs[index] ?? 0) / MAPS_PER_BLOCK / 1000,
  }));
}

/** NGINX_ROUNDS blocks: each client's blocks; a slow moment (a token's slow hash, verified again every minute) spoils one round, which the medians leave out. */
async function mapRounds(clients: MapClient[]): Promise<Block[][]> {
  const blocks = clients.map(() => [] as Block[]);
  for (let round = 0; round < NGINX_ROUNDS; round++) {
    const block = await mapBlock(clients);
    block.forEach((each, index) => blocks[index]?.push(each));
  }
  return blocks;
}

/** A figure over the rounds: its median, and the first to third quartile. */
function figure(values: number[], digits: number): string {
  return `${median(values).toFixed(digits)} (${quartiles(values, digits)})`;
}

/**
 * The table's row of one client: its figures, and those less the figures of its `reference` (the
 * same map without the cost it adds) round by round, judged against the target when `judged`.
 */
function mapRow(client: MapClient, blocks: Block[], reference: Block[] | undefined): string[] {
  const cpu = (block: Block): number => block.nginxUs + block.processUs;
  const wall = blocks.map((block) => block.ms);
  if (reference === undefined)
    return [client.name, figure(wall, 2), '', '', '', figure(blocks.map(cpu), 0), '', '', ''];
  const less = (of: (block: Block) => number): number[] =>
    blocks.map((block, round) => of(block) - (reference[round] === undefined ? Number.NaN : of(reference[round])));
  const added = less((block) => block.ms);
  const verdict = median(added) <= NGINX_TARGET_MS ? 'met' : 'not met';
  return [
    client.name,
    figure(wall, 2),
    figure(added, 3),
    client.against ?? '',
    client.judged === true ? verdict : '',
    figure(blocks.map(cpu), 0),
    figure(less(cpu), 0),
    median(less((block) => block.nginxUs)).toFixed(0),
    median(less((block) => block.processUs)).toFixed(0),
  ];
}

/** The value of X-Steward-Access the API of `stack` answers nginx for `token`'s request `uri`. */
async function owsRulesOf(stack: Stack, token: string, uri: string): Promise<string> {
  const answer = await fetch(`${stack.api.url}/api/auth/ows`, {
    headers: { authorization: `Bearer ${token}`, 'x-original-uri': uri },
  });
  const rules = answer.headers.get(OWS_ACCESS_HEADER);
  if (answer.status !== 204 || rules === null) throw new Error(`no rules for the bench's role: HTTP ${answer.status}`);
  return rules;
}

/**
 * An nginx in front of `pool`'s own QGIS Server processes that asks no one and hands them `rules`
 * with every request, as nginx's auth_request would for the bench's role (none: access control
 * off): the same processes' maps, without the check.
 */
async function frontWithRules(runDir: string, pool: QgisFcgiPool | undefined, rules: string): Promise<QgisFcgiPool> {
  if (pool === undefined) throw new Error('the bench needs the production pool');
  return startTestPool(runDir, {
    fcgiPorts: pool.fcgiPorts,
    startProcesses: false,
    requestSettings: [
      ...qgisRequestSettings(process.env),
      ...(rules === '' ? [] : [[OWS_ACCESS_PARAMETER, rules] as const]),
    ],
  });
}

/**
 * Checks that the front handed the rules draws what auth_request's does for the role's token, and
 * not what QGIS Server draws without rules (the role's filter leaves a feature out).
 */
async function sameRulesDrawn(clients: MapClient[]): Promise<void> {
  const [guarded, ruled, , open] = await Promise.all(
    clients.map((client) => fetchedMap(client.url, client.agent, client.token)),
  );
  if (!ruled?.equals(guarded ?? Buffer.alloc(0)) || ruled.equals(open ?? Buffer.alloc(0)))
    throw new Error("the front handed the rules does not draw the role's map");
}

/**
 * Median GetMap through nginx with auth_request and without, in the same rounds, all drawn by the
 * same QGIS Server processes: a token of a role with a filter against the same rules handed QGIS
 * Server without asking (what auth_request adds), those against no rules (what QGIS Server's
 * drawing under them adds), and the bootstrap administrator's maps (the check alone) against no
 * access control.
 */
async function nginxCheck(): Promise<string> {
  const guarded = await startStack({ apiToken: ADMIN, tokenFailures: 100 }, {}, 'filesystem');
  const frontDirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'steward-bench-front-')));
  const fronts: QgisFcgiPool[] = [];
  const agents = [0, 1, 2, 3].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    const roleBody = {
      projects: { [PROJECT]: { access: 'read', layers: { roads: { filter: `"kind" = 'public'` } } } },
    };
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    await fetch(`${guarded.api.url}/api/roles/viewer`, { method: 'PUT', headers, body: JSON.stringify(roleBody) });
    const created = await fetch(`${guarded.api.url}/api/tokens`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'bench', roles: ['viewer'] }),
    });
    const token = ((await created.json()) as { token: string }).token;
    const query = `?MAP=${encodeURIComponent(benchProject(guarded))}&${GET_MAP}`;
    const rules = await owsRulesOf(guarded, token, `/ows/${query}`);
    for (const [index, value] of [rules, ''].entries())
      fronts.push(await frontWithRules(frontDirs[index] ?? '', guarded.pool, value));
    const [ruled, open] = fronts;
    const nginxOf = (pool: QgisFcgiPool | undefined): number[] => {
      const master = pool?.nginxPid;
      return master === undefined ? [] : [master, ...descendants(master)];
    };
    const filtered = 'with auth_request (a token of a role with a filter)';
    const underRules = "without auth_request, the same role's rules (handed QGIS Server by nginx's configuration)";
    const none = 'without access control';
    const clients: MapClient[] = [
      {
        name: filtered,
        url: guarded.qgis.url + query,
        token,
        nginx: nginxOf(guarded.pool),
        against: underRules,
        judged: true,
      },
      { name: underRules, url: (ruled?.url ?? '') + query, token: undefined, nginx: nginxOf(ruled), against: none },
      {
        // The administrator's maps carry no rules: nginx's check alone, without the plugin's filter.
        name: 'with auth_request (the bootstrap administrator: the check alone, no rules)',
        url: guarded.qgis.url + query,
        token: ADMIN,
        nginx: nginxOf(guarded.pool),
        against: none,
        judged: true,
      },
      { name: none, url: (open?.url ?? '') + query, token: undefined, nginx: nginxOf(open) },
    ].map((client, index) => ({ ...client, agent: agents[index] as Agent }));
    await sameRulesDrawn(clients);
    const load = loadavg()[0] ?? 0;
    for (const client of clients)
      for (let map = 0; map < WARM_UP_MAPS; map++) await timedMap(client.url, client.agent, client.token);
    const blocks = await mapRounds(clients);
    const loadAfter = loadavg()[0] ?? 0;
    const blocksOf = (name: string | undefined): Block[] | undefined =>
      name === undefined ? undefined : blocks[clients.findIndex((client) => client.name === name)];
    const rows = clients.map((client, index) => mapRow(client, blocks[index] ?? [], blocksOf(client.against)));
    return [
      `### nginx's auth_request on a GetMap (target: at most ${NGINX_TARGET_MS} ms added to the median)`,
      `- One production pool (2 qgis_mapserv.fcgi with the plugin) behind three nginx: the pool's own with access control (nginx asks the API, which answers the rules; the plugin applies them), one that hands QGIS Server the rules the API answers for the role's token without asking anyone, one without access control; a 64 px GetMap of two layers of the access tests' project; one connection per client`,
      `- ${NGINX_ROUNDS} rounds of a block in which the clients take turns map by map (who goes first turned by one each map), ${MAPS_PER_BLOCK} maps each; each client's median map of the block, and the CPU time a map of every thread of the bench's process (the client and the API) and of the client's nginx, QGIS Server's left out (the filter part counts its cost of the rules), which the machine's other load does not add to; added: the difference with the client it is set against in the same block; figures: median of the rounds (first to third quartile)`,
      `- What auth_request adds is judged against the same map without it: for the role's token, against the same rules handed QGIS Server without asking (what QGIS Server's drawing under the rules adds is the next row's, which the filter part counts in instructions)`,
      `- Load average: ${load.toFixed(2)} before, ${loadAfter.toFixed(2)} after`,
      '',
      table(
        [
          'GetMap through nginx',
          'median ms',
          'added ms',
          'against',
          `target ${NGINX_TARGET_MS} ms`,
          'CPU µs a map',
          'CPU µs added',
          'of which nginx',
          'of which the bench process (API)',
        ],
        rows,
      ),
    ].join('\n');
  } finally {
    for (const agent of agents) agent.destroy();
    for (const front of fronts) await front.stop();
    await guarded.stop();
    for (const dir of frontDirs) rmSync(dir, { recursive: true, force: true });
  }
}

const FILTER_ROUNDS = 3;
const MAPS_PER_COUNT = 10;
const FILTER_TARGET = 0.01;
/** A 64 px GetMap of the layer the rules filter. */
const FILTERED_MAP =
  'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=roads&STYLES=&CRS=CRS:84&BBOX=0,0,4,4&WIDTH=64&HEIGHT=64&FORMAT=image/png';

/** STEWARD_ACCESS for an identity of roles `indexes` in the project of MAP value `map`, as Steward compiles it. */
function rulesFor(indexes: number[], map: string): string {
  const roles = indexes.map(roleName);
  const identity: Identity = {
    kind: 'token',
    name: 'user-0',
    roles,
    admin: false,
    token: null,
    permissions: new Permissions(false, indexes.map(role)),
  };
  return owsAccessValue(identity, { name: PROJECT, schema: 'public' }, map);
}

/** Whether the server's plugin applies the rules it was given: their hidden layer left out of the capabilities. */
async function checkRulesApplied(server: CountedServer, mapUrl: string, value: string): Promise<void> {
  const url = mapUrl.replace(FILTERED_MAP, 'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities');
  const listed = (await (await fetch(url)).text()).includes('<Name>secret</Name>');
  if (listed === (value !== '')) throw new Error(`the access filter of ${server.server.url} does not apply its rules`);
}

/** Whether each server draws the map of the first (no rules): every feature passes the bench's filters. */
async function checkSameMaps(urls: string[], agent: Agent): Promise<void> {
  const [first, ...others] = await Promise.all(urls.map((url) => send(url, 'GET', agent)));
  const differing = others.findIndex((map) => first === undefined || !map.equals(first));
  if (differing >= 0) throw new Error(`${urls[differing + 1] ?? ''} draws another map than without rules`);
}

/**
 * Instructions per GetMap of one qgis_mapserver with the plugin, under callgrind (instrumented only
 * while it draws the counted maps), for each set of rules: qgis_mapserver has no FastCGI
 * parameters, so each server is given its rules as the STEWARD_ACCESS of its environment, where
 * the plugin reads them alike (QgsServerInterface.getEnv).
 */
async function filterCost(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-filter-'));
  const map = join(dir, `${PROJECT}.qgs`);
  runPyqgisScript('write_access_project.py', map);
  const all = Array.from({ length: ROLES }, (_, index) => index);
  const configurations = [
    { name: 'no rules (an administrator, or access control off)', value: '' },
    {
      name: `${ROLES_HELD} of the ${ROLES} roles (${ROLES_HELD * RULES_PER_ROLE} rules)`,
      value: rulesFor(heldIndexes(), map),
    },
    { name: `all ${ROLES} roles (${ROLES * RULES_PER_ROLE} rules)`, value: rulesFor(all, map) },
  ];
  const loadBefore = loadavg()[0] ?? 0;
  const started = performance.now();
  const servers: CountedServer[] = [];
  try {
    for (const { value } of configurations) {
      const env = {
        QGIS_PLUGINPATH: PLUGIN_PATH,
        STEWARD_HOST: '127.0.0.1',
        STEWARD_PORT: String(await freePort()),
        ...(value !== '' && { STEWARD_ACCESS: value }),
      };
      const server = await CountedServer.start(env, { instrumentAtStart: false });
      if (server === undefined) return '### The access filter on GetMap\n\nNot measured: valgrind is not installed.';
      servers.push(server);
    }
    const urls = servers.map((server) => `${server.server.url}?MAP=${encodeURIComponent(map)}&${FILTERED_MAP}`);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const draw = async (url: string): Promise<void> => {
      for (let index = 0; index < MAPS_PER_COUNT; index++) await timedMap(url, agent, undefined);
    };
    for (const [index, server] of servers.entries()) {
      await checkRulesApplied(server, urls[index] ?? '', configurations[index]?.value ?? '');
      await draw(urls[index] ?? '');
    }
    await checkSameMaps(urls, agent);
    const counts = servers.map(() => [] as number[]);
    for (let round = 0; round < FILTER_ROUNDS; round++) {
      for (const [index, server] of servers.entries()) {
        counts[index]?.push((await server.instructions(() => draw(urls[index] ?? ''))) / MAPS_PER_COUNT);
      }
    }
    agent.destroy();
    const [baseline = []] = counts;
    const rows = configurations.map(({ name, value }, index) => {
      const each = counts[index] ?? [];
      const added = ratios(each, baseline).map((ratio) => (ratio - 1) * 100);
      const first = index === 0;
      return [
        name,
        value.length.toLocaleString('en'),
        (median(each) / 1e6).toFixed(2),
        first ? '' : `${median(added).toFixed(2)}% (${spread(added, 2, '%')})`,
        first ? '' : median(added) <= FILTER_TARGET * 100 ? 'met' : 'not met',
      ];
    });
    return [
      `### The access filter on GetMap (target: within ${FILTER_TARGET * 100}% of the instructions per map)`,
      `- One qgis_mapserver with the plugin per set of rules, under valgrind's callgrind instrumented only while it draws the counted maps (\`--instr-atstart=no\`, then \`callgrind_control --instr=on\`): every instruction of the process, all threads; ${FILTER_ROUNDS} rounds of ${MAPS_PER_COUNT} maps each (one connection), the servers in turn, after ${MAPS_PER_COUNT} maps each; a 64 px GetMap of the roads layer the rules filter (every feature passes the filters: each server's map is checked to be that of the server without rules)`,
      `- ${ROLES} roles of ${RULES_PER_ROLE} layer rules each (${ROLES * RULES_PER_ROLE}): an identity holding some or all of them is sent their rules, each layer's filters joined by OR; the plugin's check that it applies them: the layer they hide is left out of each server's capabilities`,
      `- added: each round's count against the server without rules in the same round; median (lowest to highest round)`,
      `- load average of the machine before: ${loadBefore.toFixed(2)}; the part took ${((performance.now() - started) / 1000).toFixed(0)} s`,
      '',
      table(
        [
          'rules',
          'STEWARD_ACCESS characters',
          'instructions per map, millions',
          'instructions added',
          `target ${FILTER_TARGET * 100}%`,
        ],
        rows,
      ),
    ].join('\n');
  } finally {
    for (const server of servers) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runAccessBench(parts: PartFilter): Promise<string> {
  const sections = ['## Access control'];
  if (parts('check')) sections.push(await apiCheck());
  if (parts('nginx')) sections.push(await nginxCheck());
  if (parts('filter')) sections.push(await filterCost());
  return sections.join('\n\n');
}
