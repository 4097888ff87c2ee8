import { BadGateway } from '../errors.js';
import { type PublishedLayer } from '../qgis/project.js';
import { rasterSld, usesBandMinimum } from '../qgis/style/raster-sld.js';
import { currentVectorSld, SldFormatError } from '../qgis/style/sld.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type QgisParams } from '../transport/qgis-get.js';
import { type LayerService } from './layers.js';
import { bytes, type MapService } from './maps.js';

export interface LayerLegend {
  contentType: string;
  body: Buffer;
}

/** A layer's current style as QGIS Server describes it: its SLD (GetStyles) and its legend (GetLegendGraphic). */
export class StyleDocuments {
  constructor(
    private readonly maps: MapService,
    private readonly layers: LayerService,
  ) {}

  private async ask(
    ref: ProjectRef,
    layer: string,
    parameters: Record<string, string>,
    params: QgisParams = [],
  ): Promise<LayerLegend> {
    const published = await this.layers.published(ref, layer);
    const url = await this.maps.projectUrl(ref);
    for (const [name, value] of Object.entries({ SERVICE: 'WMS', VERSION: '1.3.0', ...parameters })) {
      url.searchParams.set(name, value.replace('{layer}', published.wmsName));
    }
    const answer = await this.maps.ask(url.toString(), params);
    const body = await bytes(answer.body);
    const contentType = answer.headers.get('content-type') ?? '';
    if (answer.status !== 200 || contentType.includes('ServiceExceptionReport') || body.length === 0) {
      const detail = body.toString('utf8').replace(/\s+/g, ' ').slice(0, 500);
      const failed = `QGIS Server could not answer ${parameters['REQUEST']} for layer "${layer}"`;
      throw new BadGateway(`${failed}: ${detail}`, { clientMessage: `${failed}; its answer is in Steward's log` });
    }
    return { contentType, body };
  }

  /**
   * The layer's current style alone as SLD, the document QGIS Desktop's "Save as SLD" writes: QGIS
   * Server's GetStyles gives every style of the layer, of which the current one is kept.
   */
  async sld(ref: ProjectRef, layer: string): Promise<string> {
    const published = await this.layers.published(ref, layer);
    // QGIS Server writes no style for a raster layer (only vector layers' styles are SLD to it).
    if (published.type === 'raster') return this.rasterSld(ref, published);
    const answer = await this.ask(ref, layer, { REQUEST: 'GetStyles', LAYERS: '{layer}' });
    const sld = answer.body.toString('utf8');
    try {
      return currentVectorSld(sld, published.name, published.currentStyle);
    } catch (error) {
      if (!(error instanceof SldFormatError)) throw error;
      const failed = `QGIS Server's GetStyles for layer "${layer}" is not the SLD of its style`;
      throw new BadGateway(`${failed}: ${error.message}: ${sld.slice(0, 300)}`, { clientMessage: failed });
    }
  }

  /**
   * A raster layer's SLD as Desktop writes it, from the style in the project; a clipping stretch
   * names the band's minimum over the whole raster, which GDAL's statistics give.
   */
  private async rasterSld(ref: ProjectRef, layer: PublishedLayer): Promise<string> {
    const element = await this.layers.mapLayer(ref, layer.name);
    const minima = usesBandMinimum(element) ? await this.bandMinima(ref, layer) : [];
    return rasterSld(element, (band) => minima[band - 1]);
  }

  private async bandMinima(ref: ProjectRef, layer: PublishedLayer): Promise<number[]> {
    const { probed } = await this.layers.inspect(ref, layer);
    return probed?.type === 'raster' ? probed.bandRanges.map((range) => range.min) : [];
  }

  /** The PNG legend QGIS Server draws for the layer's current style, under the rules `params` carry. */
  async legend(ref: ProjectRef, layer: string, params: QgisParams = []): Promise<LayerLegend> {
    const request = { REQUEST: 'GetLegendGraphic', LAYER: '{layer}', FORMAT: 'image/png', SLD_VERSION: '1.1.0' };
    const answer = await this.ask(ref, layer, request, params);
    if (!answer.contentType.startsWith('image/')) {
      const detail = answer.body.toString('utf8').replace(/\s+/g, ' ').slice(0, 300);
      const failed = `QGIS Server drew no legend for layer "${layer}"`;
      throw new BadGateway(`${failed}: ${detail}`, { clientMessage: `${failed}; its answer is in Steward's log` });
    }
    return answer;
  }
}
