import { Readable } from 'node:stream';
import { BadGateway, GatewayTimeout } from '../errors.js';
import { CrsResolver } from '../gdal/crs.js';
import { type Extent } from '../qgis/layer.js';
import { type LayerEntry } from '../qgis/project.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type LayerService } from './layers.js';
import { type ProjectRepository } from './repository.js';

export const MAP_SIZE = 400;
const QGIS_SERVER_TIMEOUT_MS = 60_000;

export interface RenderedMap {
  contentType: string;
  body: Readable;
}

/** WMS 1.3.0 BBOX: latitude/northing first for CRSs whose EPSG axis order says so. */
function wmsBbox(extent: Extent, authid: string): string {
  const [xmin, ymin, xmax, ymax] = extent;
  const box = CrsResolver.northingFirst(authid) ? [ymin, xmin, ymax, xmax] : [xmin, ymin, xmax, ymax];
  return box.join(',');
}

/** GetMap requests for a layer, sent to the QGIS Server that publishes the project. */
export class MapService {
  constructor(
    private readonly qgisServerUrl: string,
    private readonly repository: ProjectRepository,
    private readonly layers: LayerService,
  ) {}

  /** The project's QGIS Server URL: `<server>?MAP=<project>`. */
  async projectUrl(ref: ProjectRef): Promise<URL> {
    const url = new URL(this.qgisServerUrl);
    url.searchParams.set('MAP', await this.repository.store.mapParameter(ref));
    return url;
  }

  getMapUrl(projectUrl: URL, layer: LayerEntry): string {
    const url = new URL(projectUrl);
    const parameters: Record<string, string> = {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: layer.name,
      STYLES: '',
      CRS: layer.authid,
      BBOX: wmsBbox(layer.extent, layer.authid),
      WIDTH: String(MAP_SIZE),
      HEIGHT: String(MAP_SIZE),
      FORMAT: 'image/png',
      TRANSPARENT: 'TRUE',
    };
    for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
    return url.toString();
  }

  async url(ref: ProjectRef, name: string): Promise<string> {
    const layer = await this.layers.entry(ref, name);
    return this.getMapUrl(await this.projectUrl(ref), layer);
  }

  /** Streams the PNG QGIS Server draws; a QGIS Server error becomes a 502 carrying its message. */
  async render(ref: ProjectRef, name: string): Promise<RenderedMap> {
    const url = await this.url(ref, name);
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(QGIS_SERVER_TIMEOUT_MS) });
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') throw new GatewayTimeout('QGIS Server did not answer in time');
      throw new BadGateway(`QGIS Server cannot be reached: ${(error as Error).message}`);
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (!response.ok || !contentType.startsWith('image/') || !response.body) {
      const detail = (await response.text()).replace(/\s+/g, ' ').slice(0, 500);
      throw new BadGateway(`QGIS Server could not draw layer "${name}" (HTTP ${response.status}): ${detail}`);
    }
    return { contentType, body: Readable.fromWeb(response.body as import('node:stream/web').ReadableStream) };
  }
}
