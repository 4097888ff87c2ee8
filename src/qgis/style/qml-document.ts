/** QML documents as QGIS Desktop writes them (saveNamedStyle), checked before Steward stores one. */
import { BadRequest } from '../../errors.js';
import { geometryClass } from '../geometry.js';
import { childElements, firstChild, textContent, type XmlElement } from '../xml/node.js';
import { parseXml, XmlDepthError, XmlSyntaxError } from '../xml/parse.js';

/** `renderer-v2` types QGIS 3.22 reads (QgsRendererRegistry). */
const VECTOR_RENDERERS = [
  'singleSymbol',
  'categorizedSymbol',
  'graduatedSymbol',
  'RuleRenderer',
  'pointDisplacement',
  'pointCluster',
  'heatmapRenderer',
  'invertedPolygonRenderer',
  '25dRenderer',
  'nullSymbol',
  'mergedFeatureRenderer',
  'embeddedSymbol',
];
/** `rasterrenderer` types QGIS 3.22 reads (QgsRasterRendererRegistry). */
const RASTER_RENDERERS = [
  'singlebandgray',
  'singlebandpseudocolor',
  'multibandcolor',
  'paletted',
  'hillshade',
  'contour',
  'singlebandcolordata',
];

export interface QmlFacts {
  kind: 'vector' | 'raster';
  renderer: string;
  /** point, line or polygon for a vector style that says so. */
  geometry: string | undefined;
}

function refuse(reason: string): never {
  throw new BadRequest(`not a QGIS style: ${reason}`);
}

/** Where an SLD sent as QML goes instead. */
function sldHint(rootName: string): string {
  return rootName.endsWith('StyledLayerDescriptor')
    ? ' (an SLD document: PUT .../layers/{layer}/styles/{style}/sld reads it as QGIS does)'
    : '';
}

function parsed(qml: string): XmlElement {
  try {
    return parseXml(qml).root;
  } catch (error) {
    if (error instanceof XmlDepthError) refuse(`the document is too deep: ${error.message}`);
    if (error instanceof XmlSyntaxError) refuse(`the document is not well-formed XML (${error.message})`);
    throw error;
  }
}

/**
 * What a QML document draws with; BadRequest, with the reason, for anything that is not a QGIS
 * style: not XML, another root than `<qgis>`, neither a vector renderer nor a raster pipe, a
 * renderer QGIS does not know.
 */
export function qmlFacts(qml: string): QmlFacts {
  const root = parsed(qml);
  if (root.name !== 'qgis') refuse(`its root element is <${root.name}>, not <qgis>${sldHint(root.name)}`);
  const renderer = firstChild(root, 'renderer-v2');
  const pipe = firstChild(root, 'pipe');
  if (renderer && pipe) refuse('it holds both a vector renderer (renderer-v2) and a raster pipe');
  if (renderer) {
    const type = renderer.attributes.get('type') ?? '';
    if (!VECTOR_RENDERERS.includes(type))
      refuse(`renderer-v2 type "${type}" is not one of ${VECTOR_RENDERERS.join(', ')}`);
    const geometry = geometryClass('code', textContent(firstChild(root, 'layerGeometryType')).trim())?.geometry;
    return { kind: 'vector', renderer: type, geometry };
  }
  if (pipe) {
    const rasterRenderer = childElements(pipe, 'rasterrenderer')[0];
    if (!rasterRenderer) refuse('its pipe has no rasterrenderer');
    const type = rasterRenderer.attributes.get('type') ?? '';
    if (!RASTER_RENDERERS.includes(type))
      refuse(`rasterrenderer type "${type}" is not one of ${RASTER_RENDERERS.join(', ')}`);
    return { kind: 'raster', renderer: type, geometry: undefined };
  }
  return refuse('it holds neither a vector renderer (renderer-v2) nor a raster pipe');
}
