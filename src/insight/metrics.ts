/**
 * The Prometheus metrics of GET /metrics, through prom-client. A registry of its own per app (not
 * prom-client's global one), so that several apps in one process (tests) never share series.
 * Instance figures are asked of the plugins at scrape time; a silent instance is left out of that
 * scrape rather than delaying it past the reply timeout.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { type MethodResult } from '../monitor/protocol.js';
import { type InstanceRegistry } from '../monitor/registry.js';

export interface MetricsSources {
  registry: InstanceRegistry | undefined;
  /** The number of projects and of their layers, counted at each scrape. */
  inventory(): Promise<{ projects: number; layers: number }>;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route' | 'status'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'steward_http_requests_total',
      help: 'API requests answered, by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'steward_http_request_duration_seconds',
      help: 'Time to answer an API request, by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    const inventory = oncePerScrape(() => sources.inventory());
    new Gauge({
      name: 'steward_projects',
      help: 'Projects stored',
      registers,
      async collect() {
        this.set((await inventory()).projects);
      },
    });
    new Gauge({
      name: 'steward_layers',
      help: 'Layers of all stored projects',
      registers,
      async collect() {
        this.set((await inventory()).layers);
      },
    });
    if (sources.registry) registerInstanceMetrics(sources.registry, registers);
  }

  /** Counts one answered request; `route` is the pattern (`/api/projects/:project`), never the raw URL. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * prom-client collects the metrics of a scrape concurrently, each gauge on its own: those fed by
 * one source share its answer for the scrape rather than each asking for it.
 */
function oncePerScrape<T>(read: () => Promise<T>, reuseMs = 1000): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (last === undefined || Date.now() - last.at > reuseMs) last = { at: Date.now(), value: read() };
    return last.value;
  };
}

type StatsOf = { id: string; stats: MethodResult<'stats'> | undefined }[];

function registerInstanceMetrics(instances: InstanceRegistry, registers: Registry[]): void {
  const snapshot = oncePerScrape<StatsOf>(() =>
    Promise.all(
      instances.list().map(({ id }) =>
        instances.stats(id).then(
          (stats) => ({ id, stats }),
          () => ({ id, stats: undefined }),
        ),
      ),
    ),
  );
  /** A gauge labelled by instance, set at each scrape from the instances that answered. */
  const perInstance = (
    name: string,
    help: string,
    set: (gauge: Gauge<'instance' | 'request'>, id: string, stats: MethodResult<'stats'>) => void,
  ): void => {
    new Gauge({
      name,
      help,
      labelNames: ['instance', 'request'],
      registers,
      async collect() {
        const answers = await snapshot();
        this.reset();
        for (const { id, stats } of answers) if (stats) set(this, id, stats);
      },
    });
  };
  new Gauge({
    name: 'steward_instances',
    help: 'QGIS Server instances connected',
    registers,
    collect() {
      this.set(instances.list().length);
    },
  });
  new Gauge({
    name: 'steward_instance_scrape_failures',
    help: 'Instances that did not report their statistics for this scrape',
    registers,
    async collect() {
      this.set((await snapshot()).filter(({ stats }) => stats === undefined).length);
    },
  });
  perInstance(
    'steward_instance_requests_total',
    'Requests an instance served since it started, by REQUEST, as its plugin reports',
    (gauge, id, stats) => {
      for (const [request, count] of Object.entries(stats.requests ?? {})) {
        gauge.set({ instance: id, request: request || 'none' }, count);
      }
    },
  );
  perInstance(
    'steward_instance_failures_total',
    'Requests an instance answered with an error since it started',
    (gauge, id, stats) => gauge.set({ instance: id }, stats.failures ?? 0),
  );
  perInstance(
    'steward_instance_busy_seconds_total',
    'Time an instance spent serving requests (rendering included) since it started',
    (gauge, id, stats) => gauge.set({ instance: id }, (stats.busy_ms ?? 0) / 1000),
  );
}
