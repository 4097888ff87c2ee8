/**
 * What answering `GET .../layers/{layer}/map` ahead of Fastify saves: the API as it runs (the map
 * passthrough in front of the router) against an app built on the same services without it, whose
 * map goes through Fastify's route, hooks and reply. Both draw through the same QGIS Server with
 * the same cached request, so the rounds' differences are the HTTP layer's alone.
 */
import { loadavg } from 'node:os';

import { type FastifyInstance } from 'fastify';

import { type Services } from '../src/app/services.js';
import { consoleBuildDir } from '../src/checkout.js';
import { apiRoutes } from '../src/http/api.js';
import { buildApp } from '../src/http/app.js';
import { createLogger, RecentLog } from '../src/log.js';
import { type Fixtures } from '../test/support/fixtures.js';
import { type Stack } from '../test/support/stack.js';
import { send } from './http-client.js';
import { median, ms, summarise, table, type Timing } from './stats.js';

/** Blocks of rounds whose medians give the spread. */
const BLOCKS = 5;

/** One measure (wall time or CPU time of this process) of each round's map from each app, ms. */
export interface Measure {
  passthrough: Timing;
  routed: Timing;
  /** Each round's figure through Fastify's route less its figure through the passthrough. */
  saved: Timing;
  /** The median of `saved` in each of BLOCKS consecutive blocks of rounds. */
  blockMedians: number[];
}

export interface PassthroughComparison {
  rounds: number;
  /** The machine's load average over a minute before the rounds. */
  load: number;
  wall: Measure;
  /** The CPU time of the bench's process (both apps and the client): less swayed by a busy machine. */
  cpu: Measure;
}

function measure(through: number[], viaRoute: number[]): Measure {
  const saved = viaRoute.map((time, round) => time - (through[round] ?? Number.NaN));
  const block = Math.floor(saved.length / BLOCKS);
  return {
    passthrough: summarise(through),
    routed: summarise(viaRoute),
    saved: summarise(saved),
    blockMedians: Array.from({ length: BLOCKS }, (_, at) => median(saved.slice(at * block, (at + 1) * block))),
  };
}

const cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** An app on `services` without the passthrough, as `startServer` builds one otherwise. */
async function routedApp(services: Services): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildApp(createLogger('error', new RecentLog()), apiRoutes(services, consoleBuildDir()), {
    apiToken: undefined,
    observe: services.metrics.observe.bind(services.metrics),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url };
}

/** The 64 x 64 RGB GeoTIFF's map from both, `rounds` times each, which goes first alternating. */
export async function mapThroughPassthrough(
  stack: Stack,
  data: Fixtures,
  rounds: number,
): Promise<PassthroughComparison> {
  await stack.call('POST', '/api/projects/', { name: 'bench_passthrough', author: 'bench' });
  await stack.call('POST', '/api/projects/bench_passthrough/layers', {
    type: 'raster',
    name: 'rgb',
    datasource: data.rgbTiff,
  });
  const routed = await routedApp(stack.api.services);
  try {
    const path = '/api/projects/bench_passthrough/layers/rgb/map';
    const targets = [`${stack.api.url}${path}`, `${routed.url}${path}`];
    for (let warm = 0; warm < 20; warm++) for (const target of targets) await send(target);
    const load = loadavg()[0] ?? Number.NaN;
    const walls: number[][] = [[], []];
    const cpus: number[][] = [[], []];
    for (let round = 0; round < rounds; round++) {
      for (let step = 0; step < 2; step++) {
        const index = (round + step) % 2;
        const [start, cpu] = [performance.now(), cpuMs()];
        await send(targets[index] as string);
        walls[index]?.push(performance.now() - start);
        cpus[index]?.push(cpuMs() - cpu);
      }
    }
    return {
      rounds,
      load,
      wall: measure(walls[0] ?? [], walls[1] ?? []),
      cpu: measure(cpus[0] ?? [], cpus[1] ?? []),
    };
  } finally {
    await routed.app.close();
  }
}

/** Over or within the limit only when every block's median says so. */
function verdict(blockMedians: number[], limitMs: number): string {
  if (blockMedians.every((value) => value > limitMs)) return 'over';
  if (blockMedians.every((value) => value <= limitMs)) return 'within';
  return 'the spread straddles it';
}

function row(name: string, { passthrough, routed, saved, blockMedians }: Measure, limitMs: number): string[] {
  const sorted = [...blockMedians].sort((a, b) => a - b);
  return [
    name,
    ms(passthrough.median),
    ms(routed.median),
    ms(passthrough.p95),
    ms(routed.p95),
    `${saved.median.toFixed(3)} ms`,
    `${(sorted[0] ?? Number.NaN).toFixed(3)} to ${(sorted.at(-1) ?? Number.NaN).toFixed(3)} ms`,
    `${limitMs} ms: ${verdict(sorted, limitMs)}`,
  ];
}

/** The comparison as a report section, against the `limitMs` a map may cost to go through Fastify. */
export function passthroughReport(result: PassthroughComparison, limitMs: number): string {
  return [
    '## GET .../map through the passthrough against the same map through a Fastify route',
    `${result.rounds} rounds, each the same 400 x 400 PNG of a 64 x 64 RGB GeoTIFF from the API as it runs (src/http/map-passthrough.ts answers it ahead of Fastify) and from an app built on the same services without the passthrough (Fastify's route, hooks and reply); which goes first alternates. Each map's wall time, and the CPU time of the bench's process (both apps and the client) while it was asked. "saved" is the median of the rounds' differences (route less passthrough); its spread is the lowest to highest median of ${BLOCKS} consecutive blocks of rounds. Load average before the rounds: ${result.load.toFixed(2)}.`,
    '',
    table(
      [
        'measure',
        'passthrough median',
        'Fastify route median',
        'passthrough p95',
        'route p95',
        'saved',
        'spread',
        'limit',
      ],
      [row('wall time', result.wall, limitMs), row('CPU time', result.cpu, limitMs)],
    ),
  ].join('\n');
}
