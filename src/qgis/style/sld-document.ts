/** SLD documents sent to Steward, checked before QGIS is asked to read one. */
import { BadRequest } from '../../errors.js';
import { parseXml, XmlDepthError, XmlSyntaxError } from '../xml/parse.js';

const ROOT = 'StyledLayerDescriptor';

function refuse(reason: string): never {
  throw new BadRequest(`not an SLD document: ${reason}`);
}

/** The element's name without its namespace prefix (`sld:StyledLayerDescriptor`). */
function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1);
}

/**
 * BadRequest, with the reason, for a document that is not SLD: not well-formed XML, nested deeper
 * than Steward reads, with a DOCTYPE (QGIS's reader would expand the entities it declares), or
 * rooted elsewhere than at `<StyledLayerDescriptor>` (SLD 1.0, or 1.1 with SE).
 */
export function checkSldDocument(source: string): void {
  let document;
  try {
    document = parseXml(source);
  } catch (error) {
    if (error instanceof XmlDepthError) refuse(`the document is too deep: ${error.message}`);
    if (error instanceof XmlSyntaxError) refuse(`the document is not well-formed XML (${error.message})`);
    throw error;
  }
  if (document.prolog.some((node) => node.kind === 'raw' && /^<!DOCTYPE/i.test(node.markup)))
    refuse('a DOCTYPE is not taken');
  const name = localName(document.root.name);
  if (name !== ROOT) refuse(`its root element is <${document.root.name}>, not <${ROOT}>`);
}
