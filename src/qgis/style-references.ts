/**
 * The files and fonts a layer's styles refer to, read from its `<maplayer>` element: every style of
 * its style manager and its labels. QGIS writes symbol layer properties either as
 * `<Option name="..." value="..."/>` (3.x) or `<prop k="..." v="..."/>` (older); both are read.
 */
import { childElements, type XmlElement } from './xml/node.js';

/** Symbol layer classes and the property naming the file each draws. */
const FILE_PROPERTIES: Record<string, { kind: 'svg' | 'image'; property: string }> = {
  SvgMarker: { kind: 'svg', property: 'name' },
  SVGFill: { kind: 'svg', property: 'svgFile' },
  RasterMarker: { kind: 'image', property: 'imageFile' },
  RasterFill: { kind: 'image', property: 'imageFile' },
};

export interface StyleReferences {
  svg: string[];
  images: string[];
  fonts: string[];
}

function property(symbolLayer: XmlElement, name: string): string | undefined {
  const stack = [...childElements(symbolLayer)];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.name === 'Option' && node.attributes.get('name') === name && node.attributes.has('value')) {
      return node.attributes.get('value');
    }
    if (node.name === 'prop' && node.attributes.get('k') === name) return node.attributes.get('v');
    // Nested symbols (a marker line's marker) are separate symbol layers, visited on their own.
    if (node.name !== 'layer') stack.push(...childElements(node));
  }
  return undefined;
}

/** Files embedded in the project (`base64:`) or on the web are not the server's files. */
function isLocalFile(value: string): boolean {
  return value !== '' && !/^(base64:|https?:\/\/)/i.test(value);
}

export function styleReferences(mapLayer: XmlElement): StyleReferences {
  const found = { svg: new Set<string>(), images: new Set<string>(), fonts: new Set<string>() };
  const stack = [mapLayer];
  for (let node = stack.pop(); node; node = stack.pop()) {
    stack.push(...childElements(node));
    if (node.name === 'text-style') {
      const family = node.attributes.get('fontFamily');
      if (family) found.fonts.add(family);
      continue;
    }
    if (node.name !== 'layer') continue;
    const className = node.attributes.get('class') ?? '';
    if (className === 'FontMarker') {
      const family = property(node, 'font');
      if (family) found.fonts.add(family);
      continue;
    }
    const file = FILE_PROPERTIES[className];
    const value = file && property(node, file.property);
    if (file && value !== undefined && isLocalFile(value)) (file.kind === 'svg' ? found.svg : found.images).add(value);
  }
  return { svg: [...found.svg], images: [...found.images], fonts: [...found.fonts] };
}
