/**
 * A vector layer's fields, from its source's definition and the project's expression fields, and
 * the values of one field over every feature of its source, which a categorized or graduated style
 * is classified from: GDAL reads them, the values in a worker process (src/gdal/field-values.ts).
 */
import { Unprocessable } from '../errors.js';
import { type GdalSource } from '../gdal/datasource.js';
import { type FieldValues, fieldValuesOffLoop } from '../gdal/field-values.js';
import { vectorFields } from '../gdal/probe.js';
import { layerExpressionFields, type LayerField } from '../qgis/field-types.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { type LayerService } from './layers.js';

export class FieldQueries {
  constructor(private readonly layers: LayerService) {}

  /** The source GDAL reads of a vector layer: 422 for a raster or a layer GDAL does not read; Forbidden outside the data folders. */
  private async vectorSource(ref: ProjectRef, name: string, needs: string): Promise<GdalSource> {
    const layer = await this.layers.entry(ref, name);
    if (layer.type !== 'vector') throw new Unprocessable(`layer "${name}" is a raster: it has no fields`);
    const source = await this.layers.gdalSource(ref, layer);
    if (!source) {
      throw new Unprocessable(
        `layer "${name}" (provider ${layer.provider}) is not data GDAL reads, so its ${needs} cannot be listed`,
      );
    }
    await this.layers.confineSource(ref, layer);
    return source;
  }

  /**
   * The layer's fields: its source's as GDAL reads their definitions (no feature is read), then
   * those its joins add, then the expression fields the project gives it. 422 as `values`, and `datasource_unreadable` when GDAL
   * cannot open the source or lacks its layer.
   */
  async fields(ref: ProjectRef, name: string): Promise<LayerField[]> {
    const source = await this.vectorSource(ref, name, 'fields');
    const computed = layerExpressionFields(await this.layers.mapLayer(ref, name));
    const joined = await this.layers.joinedFields(ref, name);
    try {
      return [...(await vectorFields(source)), ...joined, ...computed];
    } catch (error) {
      throw new Unprocessable(`GDAL cannot read the layer's source: ${(error as Error).message}`, {
        code: 'datasource_unreadable',
      });
    }
  }

  /**
   * At most `limit` distinct values of `field`, and its minimum and maximum when numeric: 422 for a
   * raster or a layer GDAL does not read, 404 (`field_not_found`) for a field its source lacks; the
   * reading stops once `signal` aborts.
   */
  async values(
    ref: ProjectRef,
    name: string,
    field: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<FieldValues> {
    return fieldValuesOffLoop(await this.vectorSource(ref, name, 'values'), field, limit, signal);
  }
}
