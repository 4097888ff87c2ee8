/**
 * A layer's current style as SLD, in the document QGIS Desktop's "Save as SLD"
 * (`QgsMapLayer::saveSldStyle`) writes: one named layer holding one user style, both named after
 * the layer, indented by two spaces.
 */
import { lineBreak, QGIS_LAYOUT } from '../xml/layout.js';
import { childElements, firstChild, setText, text, textContent, type XmlElement, type XmlNode } from '../xml/node.js';
import { parseXml } from '../xml/parse.js';
import { serializeElement } from '../xml/serialize.js';

/** An answer of QGIS Server that is not the SLD it writes. */
export class SldFormatError extends Error {}

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function parsed(source: string): XmlElement {
  try {
    return parseXml(source).root;
  } catch (error) {
    throw new SldFormatError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * Lays the document out as QDom's `save(stream, 2)` does: an element holding no text gets a line
 * for each child element or comment, indented by two spaces a level; the whitespace it had is dropped.
 */
function layOut(target: XmlElement, depth: number): XmlElement {
  const blank = (child: XmlNode): boolean => child.kind === 'text' && child.value.trim() === '';
  const holdsText = target.children.some((child) => child.kind === 'text' && !blank(child));
  const kept = target.children.filter((child) => !blank(child));
  if (holdsText || kept.length === 0) return target;
  target.children = kept.flatMap((child) => [
    text(lineBreak(QGIS_LAYOUT, depth + 1)),
    child.kind === 'element' ? layOut(child, depth + 1) : child,
  ]);
  target.children.push(text(lineBreak(QGIS_LAYOUT, depth)));
  return target;
}

/** A document as QDom's `save(stream, 2)` writes it, which is how Desktop saves an SLD. */
export function desktopLayout(root: XmlElement): string {
  return `${DECLARATION}\n${serializeElement(layOut(root, 0))}\n`;
}

/**
 * The SLD of a vector layer's current style, from QGIS Server's GetStyles answer, which holds a
 * user style per style of the layer (named after it, in the style manager's order): the current
 * one is kept alone and named after the layer, as Desktop names it. `currentStyle` is the style's
 * name as QGIS shows it.
 */
export function currentVectorSld(getStyles: string, layerName: string, currentStyle: string): string {
  const root = parsed(getStyles);
  if (root.name !== 'StyledLayerDescriptor') {
    throw new SldFormatError(`the root element is <${root.name}>, not <StyledLayerDescriptor>`);
  }
  const namedLayer = firstChild(root, 'NamedLayer');
  if (!namedLayer) throw new SldFormatError('the SLD has no <NamedLayer>');
  const styles = childElements(namedLayer, 'UserStyle');
  const named = (style: XmlElement): string => textContent(firstChild(style, 'se:Name'));
  const current = styles.length === 1 ? styles[0] : styles.find((style) => named(style) === currentStyle);
  if (!current) {
    const found = styles.map(named).join('", "');
    throw new SldFormatError(`the SLD has no user style "${currentStyle}" (it has "${found}")`);
  }
  namedLayer.children = namedLayer.children.filter(
    (child) => child.kind !== 'element' || child.name !== 'UserStyle' || child === current,
  );
  for (const nameElement of [firstChild(namedLayer, 'se:Name'), firstChild(current, 'se:Name')]) {
    if (nameElement) setText(nameElement, layerName);
  }
  return desktopLayout(root);
}
