/**
 * Raster processing on a project's layers: exact histograms and the raster calculator. Layers are
 * named as the project names them; the lookup turns a name into the datasource GDAL opens.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

import { BadRequest, Conflict } from '../errors.js';
import { bandReferences } from '../gdal/calculator/ast.js';
import { type CalculationResult, planCalculation } from '../gdal/calculator/calculate.js';
import { minusHint } from '../gdal/calculator/lexer.js';
import { parseExpression } from '../gdal/calculator/parser.js';
import { type TaskRun } from '../gdal/gdal-child.js';
import { histogramOffLoop } from '../gdal/histogram.js';
import { type BandHistogram, type HistogramOptions } from '../gdal/histogram-bins.js';
import { isObjectStoragePath } from '../gdal/object-storage.js';
import { checkOutput, type OutputLimits, UNLIMITED } from '../gdal/output-limits.js';
import { buildOverviews, overviewWorkFolder, planOverviews } from '../gdal/overviews.js';
import { type ProjectRef } from '../storage/project-store.js';

export interface ProcessingLayer {
  name: string;
  type: 'raster' | 'vector';
  /** The datasource GDAL opens: a path, a `/vsis3/` path, ... */
  source: string;
}

/** How processing finds layers; findLayer throws NotFound for an unknown project or layer. */
export interface LayerLookup {
  findLayer(project: ProjectRef, layer: string): Promise<ProcessingLayer>;
  listLayers(project: ProjectRef): Promise<ProcessingLayer[]>;
  /** The datasources of every layer of every project in `schema`. */
  sourcesInSchema(schema: string): Promise<string[]>;
}

export interface CalculationRequest {
  expression: string;
  /** Local path or `/vsis3/<bucket>/<key>` of the GeoTIFF to create. */
  output: string;
  /** Whether an existing file at `output` may be replaced (never a layer's source). */
  overwrite?: boolean;
}

/** What overview building did: the raster's factors afterwards, and the `.ovr` it wrote, if it wrote one. */
export type OverviewResult = {
  layer: string;
  datasource: string;
  factors: number[];
  file?: string;
};

/** Checked work, run now or as a job: `run` stops it and follows its progress. */
export type PlannedWork<T> = (run?: TaskRun) => Promise<T>;

/** Refuses outputs Steward may not write (STEWARD_DATA_ROOTS). */
export interface OutputGuard {
  check(path: string): Promise<void>;
}

export interface ProcessingOptions {
  outputs?: OutputGuard;
  /** Bounds on what a run may write; none unless told. */
  limits?: OutputLimits;
}

/** The file a GDAL datasource names: its path before any `|option`. */
function datasourceFile(source: string): string {
  return source.split('|')[0] ?? source;
}

/** A local path with links and `..` resolved; a missing file's own name joined to its folder's real path. */
async function realFile(path: string): Promise<string> {
  const absolute = resolve(path);
  return realpath(absolute).catch(async () =>
    join(await realpath(dirname(absolute)).catch(() => dirname(absolute)), basename(absolute)),
  );
}

export class ProcessingService {
  private readonly limits: OutputLimits;

  constructor(
    private readonly layers: LayerLookup,
    private readonly options: ProcessingOptions = {},
  ) {
    this.limits = options.limits ?? UNLIMITED;
  }

  /** Refuses (409) an output that is the datasource of a layer of any project of `schema`. */
  private async refuseLayerSource(schema: string, output: string): Promise<void> {
    const target = isObjectStoragePath(output) ? output : await realFile(output);
    for (const source of await this.layers.sourcesInSchema(schema)) {
      const file = datasourceFile(source);
      const real = isObjectStoragePath(file) ? file : await realFile(file);
      if (real === target)
        throw new Conflict(`Output ${output} is the datasource of a project layer, which is never overwritten.`, {
          code: 'output_is_datasource',
        });
    }
  }

  /** Histogram of every band of a raster layer, keyed "1", "2", ...; `signal` stops it. */
  async histogram(
    project: ProjectRef,
    layer: string,
    options: HistogramOptions = {},
    signal?: AbortSignal,
  ): Promise<Record<string, BandHistogram>> {
    const found = await this.layers.findLayer(project, layer);
    if (found.type !== 'raster')
      throw new BadRequest(`Layer "${layer}" is a vector layer; a histogram needs a raster layer.`);
    return histogramOffLoop(found.source, options, signal);
  }

  /**
   * Checks a raster calculator expression over the project's raster layers and returns its
   * calculation into `request.output`, to run now or as a job.
   */
  async planCalculation(project: ProjectRef, request: CalculationRequest): Promise<PlannedWork<CalculationResult>> {
    const tree = parseExpression(request.expression);
    await this.options.outputs?.check(request.output);
    await this.refuseLayerSource(project.schema, request.output);
    const named = new Set(bandReferences(tree).map(({ ref }) => ref.layer));
    const layers = await this.layers.listLayers(project);
    const sources = new Map<string, string>();
    for (const name of named) {
      const layer = layers.find((candidate) => candidate.name === name);
      if (!layer)
        throw new BadRequest(
          `The expression uses layer "${name}", which project "${project.name}" does not have${minusHint(name)}.`,
        );
      if (layer.type !== 'raster')
        throw new BadRequest(
          `The expression uses layer "${name}", which is a vector layer; only raster layers can be calculated.`,
        );
      sources.set(name, layer.source);
    }
    return planCalculation(tree, sources, request.output, { overwrite: request.overwrite, limits: this.limits });
  }

  /** Evaluates a raster calculator expression over the project's raster layers into `output`. */
  async calculate(project: ProjectRef, request: CalculationRequest): Promise<CalculationResult> {
    return (await this.planCalculation(project, request))();
  }

  /**
   * Checks that a raster layer can be given overviews and returns the build: an external
   * `<file>.ovr` beside a local raster, `<key>.ovr` beside one on object storage. A raster that
   * has overviews already is left as it is.
   */
  async planOverviews(project: ProjectRef, layer: string): Promise<PlannedWork<OverviewResult>> {
    const found = await this.layers.findLayer(project, layer);
    if (found.type !== 'raster')
      throw new BadRequest(`Layer "${layer}" is a vector layer; overviews are built for raster layers.`);
    const file = `${found.source}.ovr`;
    await this.options.outputs?.check(file);
    const plan = await planOverviews(found.source);
    if (plan.factors.length > 0)
      await checkOutput(plan.bytes, overviewWorkFolder(found.source), this.limits, `The overviews ${file}`);
    return async (run) => {
      const factors = await buildOverviews(found.source, run, plan);
      const built = plan.existing.length === 0 && factors.length > 0;
      return { layer, datasource: found.source, factors, ...(built && { file }) };
    };
  }
}
