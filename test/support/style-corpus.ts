/** The style corpus written by QGIS itself (test/support/pyqgis/style_corpus.py) and QGIS's own drawing of it. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { type Fixtures } from './fixtures.js';
import { runPyqgisScript } from './pyqgis-scripts.js';
import { writeRaster } from './rasters.js';

export interface CorpusSources {
  points: string;
  lines: string;
  polygons: string;
  rgb: string;
  /** A Float32 hill, 160 x 100 pixels of 10 m in EPSG:32631 (wider than tall), 100 at its top. */
  dem: string;
  /** A Byte raster of diagonal bands of classes 0, 1 and 2, 60 x 90 pixels in EPSG:32631 (taller than wide). */
  classes: string;
}

export interface CorpusStyle {
  style: string;
  layer: keyof CorpusSources;
  kind: 'vector' | 'raster';
  /** The files (relative to the corpus folder) the style draws with, uploaded with it as a package. */
  package: string[];
}

/** The corpus's data: the fixtures' vectors and RGB raster, and a DEM and a classified raster beside them. */
export function corpusSources(data: Fixtures): CorpusSources {
  const dem = writeRaster(join(data.dir, 'dem.tif'), {
    type: 'Float32',
    width: 160,
    height: 100,
    value: (x, y) => 100 * Math.exp(-((x - 80) ** 2 + (y - 50) ** 2) / 800),
  });
  const classes = writeRaster(join(data.dir, 'classes.tif'), {
    type: 'Byte',
    width: 60,
    height: 90,
    value: (x, y) => Math.floor(x / 20 + y / 20) % 3,
  });
  return {
    points: `${data.geopackage}|layername=points`,
    lines: `${data.geopackage}|layername=lines`,
    polygons: `${data.geopackage}|layername=polygons`,
    rgb: data.rgbTiff,
    dem,
    classes,
  };
}

/** Runs a style_corpus.py command that writes QMLs into `dir` and answers what it wrote. */
function writeStyles(command: string, sources: CorpusSources, dir: string): CorpusStyle[] {
  const file = join(dir, 'sources.json');
  writeFileSync(file, JSON.stringify(sources));
  return JSON.parse(runPyqgisScript('style_corpus.py', command, file, dir)) as CorpusStyle[];
}

/** Has QGIS write a QML per renderer into `dir` (saveNamedStyle); answers what it wrote. */
export function writeCorpus(sources: CorpusSources, dir: string): CorpusStyle[] {
  return writeStyles('write', sources, dir);
}

/** Has QGIS write QMLs whose layer-level settings matter (scale visibility, reference scale, expression fields). */
export function writeLayerLevelStyles(sources: CorpusSources, dir: string): CorpusStyle[] {
  return writeStyles('layer-level', sources, dir);
}

/** Has QGIS write raster QMLs whose SLD holds more than the corpus's (filters, opacity, scales, clipping). */
export function writeRasterSldStyles(sources: CorpusSources, dir: string): CorpusStyle[] {
  return writeStyles('raster-sld', sources, dir);
}

export interface RenderJob {
  kind: 'vector' | 'raster';
  source: string;
  qml: string;
  /** An SLD file to draw with instead of the QML, read with loadSldStyle. */
  sld?: string;
  crs: string;
  extent: [number, number, number, number];
  size: number;
  dpi: number;
  out: string;
}

/**
 * Draws each layer with its QML (or SLD) as QGIS does (QgsMapRendererParallelJob), into each job's
 * PNG; answers whether each style was read.
 */
export function renderWithQgis(jobs: RenderJob[], dir: string): Array<{ ok: boolean; message?: string }> {
  const file = join(dir, 'jobs.json');
  writeFileSync(file, JSON.stringify(jobs));
  return JSON.parse(runPyqgisScript('style_corpus.py', 'render', file)) as Array<{ ok: boolean; message?: string }>;
}

export interface SaveSldJob {
  kind: 'vector' | 'raster';
  source: string;
  /** The layer's name, which QGIS writes as the SLD's layer and style name. */
  name: string;
  qml: string;
  out: string;
}

/** Writes each layer's SLD as QGIS Desktop's "Save as SLD" does (saveSldStyle after loading the QML). */
export function saveSldWithQgis(jobs: SaveSldJob[], dir: string): Array<{ ok: boolean; message: string }> {
  const file = join(dir, 'sld-jobs.json');
  writeFileSync(file, JSON.stringify(jobs));
  return JSON.parse(runPyqgisScript('style_corpus.py', 'save-sld', file)) as Array<{ ok: boolean; message: string }>;
}

/** Reads an SLD file into a layer with QGIS (loadSldStyle). */
export function readSldWithQgis(
  file: string,
  kind: 'vector' | 'raster',
  source: string,
): { ok: boolean; message: string; renderer: string | null } {
  return JSON.parse(runPyqgisScript('style_corpus.py', 'sld', file, kind, source)) as {
    ok: boolean;
    message: string;
    renderer: string | null;
  };
}
