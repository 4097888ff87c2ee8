/**
 * Styles uploaded as SLD (GeoServer's and other servers' styles), read by QGIS itself: QGIS Server,
 * through Steward's plugin (the STEWARD service's SldStyle request), loads the SLD into a copy of
 * the layer as QGIS Desktop's "Load Style" does (`QgsMapLayer::loadSldStyle`) and answers the QML it
 * then saves, which is stored as an uploaded QML is. So the style is what QGIS reads from the SLD,
 * whatever its symbolizers, filters and scales, on the QGIS Server release that will draw it.
 */
import { BadGateway, BadRequest, Unprocessable } from '../errors.js';
import { checkSldDocument } from '../qgis/style/sld-document.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type LayerService } from './layers.js';
import { bytes, type MapService } from './maps.js';
import { checkName } from './names.js';
import { type StyleAnswer, type StylePackages } from './style-packages.js';

/** The plugin's answer, shortened, in error messages. */
const DETAIL_CHARS = 500;

export class SldStyles {
  constructor(
    private readonly maps: MapService,
    private readonly layers: LayerService,
    private readonly packages: StylePackages,
  ) {}

  /**
   * Stores (or replaces) style `name` as QGIS reads `sld` for layer `layer`, and adds it to the
   * layer's style manager, as its current style when `current`. BadRequest for a document that is
   * not SLD, Unprocessable with QGIS's reason when QGIS reads no style from it.
   */
  async put(ref: ProjectRef, layer: string, name: string, sld: string, current: boolean): Promise<StyleAnswer> {
    checkName('style', name);
    checkSldDocument(sld);
    const qml = await this.qml(ref, layer, sld);
    return this.packages.putDocument(ref, name, qml, { target: { layer, current } });
  }

  /** The QML QGIS Server's plugin writes after loading `sld` into a copy of the layer. */
  private async qml(ref: ProjectRef, layer: string, sld: string): Promise<string> {
    const published = await this.layers.published(ref, layer);
    const parameters = { REQUEST: 'SldStyle', LAYER: published.id };
    const answer = await this.maps.askSteward(ref, parameters, { SLD: sld });
    const text = (await bytes(answer.body)).toString('utf8');
    const detail = text.replace(/\s+/g, ' ').slice(0, DETAIL_CHARS);
    if (answer.status === 200 && (answer.headers.get('content-type') ?? '').startsWith('application/xml')) return text;
    if (answer.status === 400) throw new BadRequest(`not an SLD document: ${detail}`);
    if (answer.status === 422)
      throw new Unprocessable(`QGIS reads no style for layer "${layer}" from the SLD: ${detail}`);
    const failed = `QGIS Server could not read the SLD (HTTP ${answer.status}); it needs Steward's plugin`;
    throw new BadGateway(`${failed}: ${detail}`, { clientMessage: `${failed}: its answer is in Steward's log` });
  }
}
