import { type XmlDocument, type XmlElement, type XmlNode } from './node.js';

const TEXT_ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;' };
const ATTRIBUTE_ESCAPES: Record<string, string> = {
  ...TEXT_ESCAPES,
  '"': '&quot;',
  '\n': '&#xa;',
  '\r': '&#xd;',
  '\t': '&#x9;',
};

function escapeText(value: string): string {
  return /[<>&]/.test(value) ? value.replace(/[<>&]/g, (c) => TEXT_ESCAPES[c] as string) : value;
}

function escapeAttribute(value: string): string {
  return /[<>&"\n\r\t]/.test(value) ? value.replace(/[<>&"\n\r\t]/g, (c) => ATTRIBUTE_ESCAPES[c] as string) : value;
}

function write(node: XmlNode, out: string[]): void {
  if (node.kind === 'text') {
    out.push(escapeText(node.value));
    return;
  }
  if (node.kind === 'raw' || node.kind === 'deferred') {
    out.push(node.markup);
    return;
  }
  writeElement(node, out);
}

function writeElement(node: XmlElement, out: string[]): void {
  out.push('<', node.name);
  for (const [name, value] of node.attributes) out.push(' ', name, '="', escapeAttribute(value), '"');
  if (node.children.length === 0) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const child of node.children) write(child, out);
  out.push('</', node.name, '>');
}

/** One element alone, exactly as it is written inside its document. */
export function serializeElement(element: XmlElement): string {
  const out: string[] = [];
  writeElement(element, out);
  return out.join('');
}

export function serializeXml(document: XmlDocument): string {
  const out: string[] = [];
  for (const node of document.prolog) write(node, out);
  writeElement(document.root, out);
  out.push('\n');
  return out.join('');
}
