/**
 * Seeding again after a style change: a layer whose drawing changed has lost its cached tiles, and
 * is seeded anew on the levels and extent of its last seed that succeeded.
 */
import { type JobRecord } from '../jobs/record.js';
import { type JobService } from '../jobs/service.js';
import { type ProjectRef } from '../storage/project-store.js';
import { selectionOf, type SelectionParams } from './seed-config.js';
import { type TileCacheService } from './service.js';

/** The part of a seed's selection that a re-seed repeats: the levels and the extent, not the layers. */
type Coverage = Omit<SelectionParams, 'layers' | 'refresh'>;

function coverageOf(params: Record<string, unknown>): Coverage {
  const { min_zoom, max_zoom, extent, extent_crs } = params as unknown as SelectionParams;
  return { min_zoom, max_zoom, ...(extent && { extent }), ...(extent_crs !== undefined && { extent_crs }) };
}

function seeded(job: JobRecord, layer: string): boolean {
  const layers = (job.params as Partial<SelectionParams>).layers;
  return layers === undefined || layers.includes(layer);
}

/**
 * One seed request per coverage: the layers whose last seed (in `seeds`, newest first) covered the
 * same levels and extent are seeded together. Layers never seeded are left out.
 */
export function reseedRequests(layers: readonly string[], seeds: readonly JobRecord[]): SelectionParams[] {
  const byCoverage = new Map<string, SelectionParams>();
  for (const layer of layers) {
    const last = seeds.find((job) => seeded(job, layer));
    if (!last) continue;
    const coverage = coverageOf(last.params);
    const key = JSON.stringify(coverage);
    const request = byCoverage.get(key) ?? { ...coverage, layers: [], refresh: true };
    request.layers?.push(layer);
    byCoverage.set(key, request);
  }
  return [...byCoverage.values()];
}

export class Reseeder {
  constructor(
    private readonly cache: TileCacheService,
    private readonly jobs: JobService,
  ) {}

  /** Conflict when the project cannot be seeded, to be asked before the style changes. */
  assertReady(ref: ProjectRef): Promise<void> {
    return this.cache.assertSeedable(ref);
  }

  /** Seed jobs for the layers that had been seeded; none for layers never seeded. */
  async reseed(ref: ProjectRef, layers: readonly string[]): Promise<JobRecord[]> {
    if (layers.length === 0) return [];
    const succeeded = await this.jobs.list({ project: ref.name, kind: 'seed', state: 'succeeded' });
    // Records of projects kept in files name no schema.
    const seeds = succeeded.filter((job) => job.schema === undefined || job.schema === ref.schema);
    const submitted: JobRecord[] = [];
    for (const params of reseedRequests(layers, seeds)) {
      const work = await this.cache.planSeed(ref, 'seed', selectionOf(params));
      submitted.push(await this.jobs.submit({ kind: 'seed', project: ref, params: { ...params } }, work));
    }
    return submitted;
  }
}
