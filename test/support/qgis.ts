import { DOMParser } from '@xmldom/xmldom';

/** A QGIS Server a test reaches over HTTP and whose log it reads: qgis_mapserver, or the production pool. */
export interface TestQgisServer {
  readonly url: string;
  readonly log: readonly string[];
  stop(): Promise<void>;
}

/** Sends an OGC request for a project to QGIS Server directly. */
export async function ows(qgis: TestQgisServer, map: string, parameters: Record<string, string>): Promise<Response> {
  const url = new URL(qgis.url);
  url.searchParams.set('MAP', map);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return fetch(url);
}

/**
 * QGIS Server's own GetMap of one layer over an EPSG:4326 extent, asked as Steward's layer map asks
 * it: WMS 1.3.0 (latitude first), 400 x 400 transparent PNG.
 */
export function ownLayerMap(
  qgis: TestQgisServer,
  map: string,
  wmsName: string,
  [xmin, ymin, xmax, ymax]: readonly (number | string)[],
): Promise<Response> {
  return ows(qgis, map, {
    SERVICE: 'WMS',
    VERSION: '1.3.0',
    REQUEST: 'GetMap',
    LAYERS: wmsName,
    STYLES: '',
    CRS: 'EPSG:4326',
    BBOX: [ymin, xmin, ymax, xmax].join(','),
    WIDTH: '400',
    HEIGHT: '400',
    FORMAT: 'image/png',
    TRANSPARENT: 'TRUE',
  });
}

/** The names of the layers QGIS Server publishes in WMS GetCapabilities (nested <Layer><Name>). */
export async function publishedLayers(qgis: TestQgisServer, map: string): Promise<string[]> {
  const response = await ows(qgis, map, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' });
  // XML 1.0 line ends only: xmldom's default also turns U+0085, U+2028 and U+2029 into \n, as XML 1.1 does.
  const parser = new DOMParser({ normalizeLineEndings: (text) => text.replace(/\r\n?/g, '\n') });
  const document = parser.parseFromString(await response.text(), 'text/xml');
  const layers = Array.from(document.getElementsByTagName('Layer'), (layer) => {
    const name = Array.from(layer.childNodes).find((child) => child.nodeName === 'Name');
    return name?.textContent ?? '';
  });
  // The first <Layer> is the project's root layer.
  return layers.slice(1);
}

/** Log lines in which QGIS Server complains about a project or a layer. */
export function projectProblems(qgis: TestQgisServer): string[] {
  return qgis.log.filter((line) =>
    /broken|corrupt|invalid layer|could not be loaded|error reading|unable to load/i.test(line),
  );
}

/**
 * An XML document with each element's attributes in name order: QGIS Server's processes write them
 * in the order of a per-process hash, so two processes of one pool differ there and only there.
 */
export function withSortedAttributes(xml: string): string {
  return xml.replace(
    /<([\w:.-]+)((?:\s+[\w:.-]+="[^"]*")+)(\s*\/?)>/g,
    (_tag, name: string, attributes: string, end: string) => {
      const sorted = (attributes.match(/[\w:.-]+="[^"]*"/g) ?? []).sort();
      return `<${name} ${sorted.join(' ')}${end}>`;
    },
  );
}
