/**
 * The Prometheus metrics of GET /metrics, through prom-client. A registry of its own per app (not
 * prom-client's global one), so that several apps in one process (tests) never share series.
 * Instance figures are asked of the plugins at scrape time; a silent instance is left out of that
 * scrape rather than delaying it past the reply timeout.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { type JobRecord } from '../jobs/record.js';
import { type MethodResult } from '../monitor/protocol.js';
import { type InstanceRegistry } from '../monitor/registry.js';

export interface MetricsSources {
  registry: InstanceRegistry | undefined;
  /** The number of projects and of their layers, counted at each scrape. */
  inventory(): Promise<{ projects: number; layers: number }>;
  /** The jobs recorded (seeding, truncation), read at each scrape. */
  jobs(): Promise<JobSummary[]>;
}

export type JobSummary = Pick<JobRecord, 'id' | 'kind' | 'project' | 'state' | 'progress'>;

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route' | 'status'>;
  private readonly childRestarts: Counter<'child'>;
  /** Counts the scrapes, so that each reads its sources afresh. */
  private scrapes = 0;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    const perScrape = oncePerScrape(() => this.scrapes);
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
    this.childRestarts = new Counter({
      name: 'steward_child_restarts_total',
      help: 'Times a process `npm start` runs (nginx, mapproxy, qgis-fcgi:<port>) was started again after it exited',
      labelNames: ['child'],
      registers,
    });
    const inventory = perScrape(() => sources.inventory());
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
    registerJobMetrics(
      perScrape(() => sources.jobs()),
      registers,
    );
    if (sources.registry) registerInstanceMetrics(sources.registry, registers, perScrape);
  }

  /** Counts one answered request; `route` is the pattern (`/api/projects/:project`), never the raw URL. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  /** Counts a restart of a process the launcher supervises. */
  childRestarted(child: string): void {
    this.childRestarts.inc({ child });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    this.scrapes += 1;
    return this.registry.metrics();
  }
}

/** Reads a source once per scrape, however many gauges ask for it. */
type PerScrape = <T>(read: () => Promise<T>) => () => Promise<T>;

/**
 * prom-client collects the metrics of a scrape concurrently, each gauge on its own: those fed by
 * one source share its answer for the scrape rather than each asking for it. `scrape` tells which
 * scrape is being collected; the next one reads the source again.
 */
function oncePerScrape(scrape: () => number): PerScrape {
  return <T>(read: () => Promise<T>) => {
    let last: { scrape: number; value: Promise<T> } | undefined;
    return () => {
      if (last === undefined || last.scrape !== scrape()) last = { scrape: scrape(), value: read() };
      return last.value;
    };
  };
}

function registerJobMetrics(jobs: () => Promise<JobSummary[]>, registers: Registry[]): void {
  new Gauge({
    name: 'steward_jobs',
    help: 'Jobs recorded, by kind and state',
    labelNames: ['kind', 'state'],
    registers,
    async collect() {
      this.reset();
      for (const job of await jobs()) this.inc({ kind: job.kind, state: job.state });
    },
  });
  new Gauge({
    name: 'steward_job_progress',
    help: 'Progress from 0 to 1 of each job queued or running',
    labelNames: ['job', 'kind', 'project'],
    registers,
    async collect() {
      this.reset();
      for (const job of await jobs()) {
        if (job.state === 'queued' || job.state === 'running') {
          this.set({ job: job.id, kind: job.kind, project: job.project }, job.progress);
        }
      }
    },
  });
}

type StatsOf = { id: string; stats: MethodResult<'stats'> | undefined }[];

function registerInstanceMetrics(instances: InstanceRegistry, registers: Registry[], perScrape: PerScrape): void {
  const snapshot = perScrape<StatsOf>(() =>
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
