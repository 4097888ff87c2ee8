/**
 * Escaping as Qt's QDomDocument writes QGIS documents, so that what Steward writes afresh has the
 * bytes QGIS would give it: `<` and `&` always, `>` only where it would close a CDATA end (`]]>`),
 * and in attribute values `"` and the line breaks and tabs that attribute-value normalisation
 * would otherwise turn into spaces. A carriage return in text is left alone: it is what a file
 * with Windows line endings holds between its elements.
 */

const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeEntities(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(parseInt(entity.slice(1), 10));
    return NAMED_ENTITIES[entity] ?? whole;
  });
}

const ESCAPES: Record<string, string> = {
  '<': '&lt;',
  '&': '&amp;',
  ']]>': ']]&gt;',
  '"': '&quot;',
  '\n': '&#xa;',
  '\r': '&#xd;',
  '\t': '&#x9;',
};

const TEXT = /[<&]|\]\]>/g;
const ATTRIBUTE = /[<&"\n\r\t]|\]\]>/g;

export function escapeText(value: string): string {
  return /[<&]|\]\]>/.test(value) ? value.replace(TEXT, (c) => ESCAPES[c] as string) : value;
}

export function escapeAttribute(value: string): string {
  return /[<&"\n\r\t]|\]\]>/.test(value) ? value.replace(ATTRIBUTE, (c) => ESCAPES[c] as string) : value;
}

/** A start tag as Steward writes it, without its closing `>` or `/>`: `<name a="1" b="2"`. */
export function startTag(name: string, attributes: ReadonlyMap<string, string>): string {
  let tag = `<${name}`;
  for (const [key, value] of attributes) tag += ` ${key}="${escapeAttribute(value)}"`;
  return tag;
}
