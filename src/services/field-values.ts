/**
 * The values of a vector layer's field over every feature of its source, which a categorized or
 * graduated style is classified from: GDAL reads them in a worker process (src/gdal/field-values.ts).
 */
import { Unprocessable } from '../errors.js';
import { type FieldValues, fieldValuesOffLoop } from '../gdal/field-values.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { type LayerService } from './layers.js';

export class FieldValueQueries {
  constructor(private readonly layers: LayerService) {}

  /**
   * At most `limit` distinct values of `field`, and its minimum and maximum when numeric: 422 for a
   * raster or a layer GDAL does not read, 404 (`field_not_found`) for a field its source lacks.
   */
  async values(ref: ProjectRef, name: string, field: string, limit: number): Promise<FieldValues> {
    const layer = await this.layers.entry(ref, name);
    if (layer.type !== 'vector') throw new Unprocessable(`layer "${name}" is a raster: it has no fields`);
    const source = await this.layers.gdalSource(ref, layer);
    if (!source) {
      throw new Unprocessable(
        `layer "${name}" (provider ${layer.provider}) is not data GDAL reads, so its values cannot be listed`,
      );
    }
    await this.layers.confineSource(ref, layer);
    return fieldValuesOffLoop(source, field, limit);
  }
}
