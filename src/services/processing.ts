/**
 * Raster processing on a project's layers: exact histograms and the raster calculator. Layers are
 * named as the project names them; the lookup turns a name into the datasource GDAL opens.
 */
import { BadRequest } from '../errors.js';
import { bandReferences } from '../gdal/calculator/ast.js';
import { calculateRaster } from '../gdal/calculator/calculate.js';
import { minusHint } from '../gdal/calculator/lexer.js';
import { parseExpression } from '../gdal/calculator/parser.js';
import { type BandHistogram, computeHistogram, type HistogramOptions } from '../gdal/histogram.js';
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
}

export interface CalculationRequest {
  expression: string;
  /** Local path or `/vsis3/<bucket>/<key>` of the GeoTIFF to create. */
  output: string;
}

/** Refuses outputs Steward may not write (STEWARD_DATA_ROOTS). */
export interface OutputGuard {
  check(path: string): Promise<void>;
}

export class ProcessingService {
  constructor(
    private readonly layers: LayerLookup,
    private readonly outputs?: OutputGuard,
  ) {}

  /** Histogram of every band of a raster layer, keyed "1", "2", ... */
  async histogram(
    project: ProjectRef,
    layer: string,
    options: HistogramOptions = {},
  ): Promise<Record<string, BandHistogram>> {
    const found = await this.layers.findLayer(project, layer);
    if (found.type !== 'raster')
      throw new BadRequest(`Layer "${layer}" is a vector layer; a histogram needs a raster layer.`);
    return computeHistogram(found.source, options);
  }

  /** Evaluates a raster calculator expression over the project's raster layers into `output`. */
  async calculate(project: ProjectRef, request: CalculationRequest): Promise<void> {
    const tree = parseExpression(request.expression);
    await this.outputs?.check(request.output);
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
    await calculateRaster(tree, sources, request.output);
  }
}
