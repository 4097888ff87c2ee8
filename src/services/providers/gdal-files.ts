/**
 * The `ogr` and `gdal` providers: files (and `/vsis3/` objects) GDAL opens, as
 * `<path>|layername=<name>` or `|layerid=<n>` for vector layers, paths relative to the project as
 * QGIS writes them (`./data/roads.gpkg`).
 */
import { isAbsolute, resolve } from 'node:path';

import { BadRequest, Unprocessable } from '../../errors.js';
import { type GdalSource, pathKind } from '../../gdal/datasource.js';
import { ProbeError } from '../../gdal/probe.js';
import { maskPasswords } from '../../qgis/datasource-uri.js';
import { isProjectRelative, splitFileDatasource } from '../../qgis/file-datasource.js';
import { type LayerType } from '../../qgis/layer.js';
import { type DataRoots, isDriverPrefixed } from '../data-roots.js';
import { type LayerInspector } from '../layer-inspector.js';
import {
  errorMessage,
  type LayerMaker,
  type PreparedSource,
  type SourceContext,
  type SourceState,
} from './provider.js';

const NEW_VECTOR_OPTION = /^(layername=.+|layerid=\d+)$/;

/** The source GDAL opens: the path (resolved against the project when relative) and the layer options. */
function fileSource(datasource: string, projectDir: string | undefined): GdalSource {
  const { path, options } = splitFileDatasource(datasource);
  const absolute = isProjectRelative(path) && projectDir !== undefined ? resolve(projectDir, path) : path;
  const source: GdalSource = { kind: pathKind(absolute), gdalPath: absolute };
  for (const option of options) {
    const [key, value = ''] = option.split('=', 2);
    if (key === 'layername') source.layerName = value;
    else if (key === 'layerid') source.layerIndex = Number(value);
  }
  return source;
}

/**
 * A new layer's options: QGIS Server refuses every request to a project with one invalid layer,
 * so only options the probe checks are taken: none on a raster layer, one `layername=` or
 * `layerid=` on a vector layer.
 */
function checkNewOptions(datasource: string, type: LayerType): void {
  const options = datasource.split('|').slice(1);
  if (type === 'raster' && options.length > 0) {
    throw new BadRequest('a raster datasource takes no "|" options: give the file as /<path>/<file>');
  }
  if (options.length > 1 || options.some((option) => !NEW_VECTOR_OPTION.test(option))) {
    throw new BadRequest('a vector datasource takes at most one option, |layername=<name> or |layerid=<number>');
  }
}

export class GdalFileProvider implements LayerMaker {
  constructor(
    readonly key: 'ogr' | 'gdal',
    private readonly dataRoots: DataRoots,
    private readonly inspector: LayerInspector,
  ) {}

  claims(_datasource: string, type: LayerType): boolean {
    return (type === 'raster') === (this.key === 'gdal');
  }

  describe(datasource: string): string {
    return maskPasswords(datasource);
  }

  gdalSource(datasource: string, context: SourceContext): GdalSource {
    return fileSource(datasource, context.projectDir);
  }

  async confine(datasource: string, context: SourceContext): Promise<void> {
    await this.dataRoots.checkDataset(this.gdalSource(datasource, context).gdalPath);
  }

  async inspect(datasource: string, context: SourceContext): Promise<SourceState> {
    try {
      await this.confine(datasource, context);
    } catch (error) {
      return { valid: false, reason: errorMessage(error) };
    }
    const inspection = await this.inspector.inspect(this.gdalSource(datasource, context), context.type, context.fresh);
    return inspection.reason === undefined ? inspection : { ...inspection, reason: maskPasswords(inspection.reason) };
  }

  async prepare(datasource: string, type: LayerType): Promise<PreparedSource> {
    checkNewOptions(datasource, type);
    const source = fileSource(datasource, undefined);
    if (!isAbsolute(source.gdalPath) && !isDriverPrefixed(source.gdalPath)) {
      throw new BadRequest(
        `datasource "${datasource}" must be an absolute path, /vsis3/<bucket>/<key> or a database table`,
      );
    }
    await this.dataRoots.checkDataset(source.gdalPath, true);
    try {
      const probed = await this.inspector.probe(source, type);
      return { provider: this.key, probed, datasource: () => datasource };
    } catch (error) {
      if (error instanceof ProbeError)
        throw new Unprocessable(maskPasswords(error.message), { code: 'datasource_unreadable' });
      throw error;
    }
  }
}
