/**
 * The files and fonts a layer's styles refer to, read from its `<maplayer>` element (every style of
 * its style manager and its labels) or from a QML's `<qgis>`. QGIS writes symbol layer properties
 * either as `<Option name="..." value="..."/>` (3.x) or `<prop k="..." v="..."/>` (older), 3.22
 * both at once; both are read and both are rewritten.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

import { childElements, type XmlElement } from './xml/node.js';

/** Symbol layer classes and the property naming the file each draws. */
const FILE_PROPERTIES: Record<string, { kind: 'svg' | 'image'; property: string }> = {
  SvgMarker: { kind: 'svg', property: 'name' },
  SVGFill: { kind: 'svg', property: 'svgFile' },
  RasterMarker: { kind: 'image', property: 'imageFile' },
  RasterFill: { kind: 'image', property: 'imageFile' },
};

/** Where QGIS looks for SVG files named without a folder it can resolve (its default SVG paths). */
export const QGIS_SVG_PATHS = ['/usr/share/qgis/svg'];
/** The attribute of a label's text format naming the SVG drawn behind the text. */
const LABEL_BACKGROUND_SVG = 'shapeSVGFile';

export interface StyleReferences {
  svg: string[];
  images: string[];
  fonts: string[];
  /** SVG files and images named by an http(s) URL, which QGIS Server fetches as it draws. */
  remote: string[];
}

/**
 * The elements holding a symbol layer's property, with the attribute that holds its value: the
 * `<Option>`s of its own `<Option type="Map">` and its `<prop>`s, never those of its
 * `<data_defined_properties>` (whose collection is also called "name") or of a nested symbol.
 */
function propertyHolders(symbolLayer: XmlElement, name: string): Array<[XmlElement, string]> {
  const holders: Array<[XmlElement, string]> = [];
  for (const map of childElements(symbolLayer, 'Option')) {
    for (const option of childElements(map, 'Option')) {
      if (option.attributes.get('name') === name && option.attributes.has('value')) holders.push([option, 'value']);
    }
  }
  for (const prop of childElements(symbolLayer, 'prop')) {
    if (prop.attributes.get('k') === name) holders.push([prop, 'v']);
  }
  return holders;
}

function property(symbolLayer: XmlElement, name: string): string | undefined {
  const [holder] = propertyHolders(symbolLayer, name);
  return holder && holder[0].attributes.get(holder[1]);
}

/** An image as QGIS reads it embedded in a style (SVG and raster markers and fills, label backgrounds). */
export function embeddedImage(bytes: Uint8Array): string {
  return `base64:${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}

const REMOTE = /^https?:\/\//i;

/** Files embedded in the project (`base64:`) or on the web are not the server's files. */
function isLocalFile(value: string): boolean {
  return value !== '' && !/^base64:/i.test(value) && !REMOTE.test(value);
}

/**
 * `root` and every element under it, without recursion and without spreading an element's
 * children into one call's arguments: a style may hold hundreds of thousands of siblings.
 */
function* elementsUnder(root: XmlElement): Generator<XmlElement> {
  const stack = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    yield node;
    for (const child of childElements(node)) stack.push(child);
  }
}

export function styleReferences(mapLayer: XmlElement): StyleReferences {
  const found = {
    svg: new Set<string>(),
    images: new Set<string>(),
    fonts: new Set<string>(),
    remote: new Set<string>(),
  };
  for (const node of elementsUnder(mapLayer)) {
    if (node.name === 'text-style') {
      const family = node.attributes.get('fontFamily');
      if (family) found.fonts.add(family);
      continue;
    }
    const background = node.name === 'background' ? node.attributes.get(LABEL_BACKGROUND_SVG) : undefined;
    if (background !== undefined && isLocalFile(background)) found.svg.add(background);
    if (background !== undefined && REMOTE.test(background)) found.remote.add(background);
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
    if (value !== undefined && REMOTE.test(value)) found.remote.add(value);
  }
  return { svg: [...found.svg], images: [...found.images], fonts: [...found.fonts], remote: [...found.remote] };
}

/**
 * Replaces the files a style refers to, wherever QGIS reads them: `replacement` answers the new
 * value of a file, or undefined to leave it.
 */
export function rewriteStyleFiles(root: XmlElement, replacement: (file: string) => string | undefined): void {
  const replace = (holder: XmlElement, attribute: string): void => {
    const value = holder.attributes.get(attribute);
    const next = value === undefined ? undefined : replacement(value);
    if (next !== undefined) holder.attributes.set(attribute, next);
  };
  for (const node of elementsUnder(root)) {
    if (node.name === 'background') replace(node, LABEL_BACKGROUND_SVG);
    const file = node.name === 'layer' ? FILE_PROPERTIES[node.attributes.get('class') ?? ''] : undefined;
    if (file) for (const [holder, attribute] of propertyHolders(node, file.property)) replace(holder, attribute);
  }
}

/**
 * Whether QGIS finds a style's file: an absolute path as it is, a relative one beside the project
 * (when it has a folder) or, unless it starts with `./` or `../`, in the search paths (QGIS's SVG
 * folders for SVG files).
 */
export function styleFileFound(file: string, projectDir: string | undefined, searchPaths: string[]): boolean {
  return styleFilePath(file, projectDir, searchPaths) !== undefined;
}

/** The path QGIS reads a style's file at (as `styleFileFound` looks for it), or undefined when it finds none. */
export function styleFilePath(file: string, projectDir: string | undefined, searchPaths: string[]): string | undefined {
  if (isAbsolute(file)) return existsSync(file) ? file : undefined;
  const bases = /^\.\.?\//.test(file) ? [projectDir] : [projectDir, ...searchPaths];
  return bases
    .map((base) => base !== undefined && resolve(join(base, file)))
    .find((path): path is string => path !== false && existsSync(path));
}
