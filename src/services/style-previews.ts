/**
 * A view drawn with one layer in a JSON style that is stored nowhere: the console's style editor
 * shows the style being edited before it is saved. Steward writes the style's QML as it would
 * store it, and QGIS Server, through Steward's plugin (the STEWARD service's StylePreview request),
 * draws the view with that QML loaded into a copy of the layer: the project is neither written
 * nor changed in QGIS Server's memory.
 */
import { BadGateway, BadRequest, Forbidden, NotFound, Unprocessable } from '../errors.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type QgisParams } from '../transport/qgis-get.js';
import { bytes, mapOf, type MapService, type MapView, type RenderedMap } from './maps.js';
import { type StyleService } from './styles.js';

/** The plugin's refusal, shortened, in error messages. */
const DETAIL_CHARS = 500;

export class StylePreviews {
  constructor(
    private readonly maps: MapService,
    private readonly styles: StyleService,
  ) {}

  /**
   * The PNG of `view` with layer `layer` drawn in the JSON style `body`, under the identity's
   * rules `params` as a map is. BadRequest for a view without the layer or a body that is not a
   * JSON style, Unprocessable when the layer cannot draw it.
   */
  async draw(ref: ProjectRef, layer: string, body: unknown, view: MapView, params: QgisParams): Promise<RenderedMap> {
    if (!view.layers.includes(layer)) throw new BadRequest(`layers must name the layer previewed, "${layer}"`);
    const qml = await this.styles.draftQml(ref, layer, body);
    const entries = await this.maps.viewLayers(ref, view);
    const previewed = entries[view.layers.indexOf(layer)]?.id ?? '';
    const parameters = {
      REQUEST: 'StylePreview',
      LAYERS: entries.map((entry) => entry.id).join(','),
      STYLES: view.styles.join(','),
      LAYER: previewed,
      CRS: view.crs,
      BBOX: view.bbox.join(','),
      WIDTH: String(view.width),
      HEIGHT: String(view.height),
    };
    const answer = await this.maps.askSteward(ref, parameters, { QML: qml }, params);
    if (answer.status === 200) return mapOf(answer, layer);
    const detail = (await bytes(answer.body)).toString('utf8').replace(/\s+/g, ' ').slice(0, DETAIL_CHARS);
    if (answer.status === 400) throw new BadRequest(`QGIS Server cannot draw this view: ${detail}`);
    if (answer.status === 403) throw new Forbidden(`the identity's rules refuse a layer of the view: ${detail}`);
    if (answer.status === 404) throw new NotFound(`QGIS Server found no such layer or style: ${detail}`);
    if (answer.status === 422) throw new Unprocessable(`QGIS cannot draw layer "${layer}" with the style: ${detail}`);
    const failed = `QGIS Server could not draw the preview of layer "${layer}" (HTTP ${answer.status}); it needs Steward's plugin`;
    throw new BadGateway(`${failed}: ${detail}`, { clientMessage: `${failed}: its answer is in Steward's log` });
  }
}
