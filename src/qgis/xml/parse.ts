import { DocumentFormatError } from '../../errors.js';
import { decodeEntities, escapeText, startTag } from './escape.js';
import { type XmlDocument, type XmlElement, type XmlNode, type XmlText } from './node.js';

export class XmlSyntaxError extends DocumentFormatError {}

/**
 * The deepest nesting of elements read. QGIS writes projects, QML and SLD a few dozen levels deep;
 * a deeper document is hostile, and the code walking a tree recursively (here and in QGIS) must
 * not be handed one.
 */
export const MAX_XML_DEPTH = 200;

/** Well-formed maybe, but nested deeper than MAX_XML_DEPTH. */
export class XmlDepthError extends XmlSyntaxError {}

const ATTRIBUTE = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function parseAttributes(source: string, keep: Keep): Map<string, string> {
  const attributes = new Map<string, string>();
  ATTRIBUTE.lastIndex = 0;
  for (let match = ATTRIBUTE.exec(source); match; match = ATTRIBUTE.exec(source)) {
    attributes.set(keep(match[1] as string), keep(decodeEntities(match[2] ?? match[3] ?? '')));
  }
  return attributes;
}

/** What the tree stores of a piece of the source. */
type Keep = (piece: string) => string;

/** V8 copies a slice shorter than this (SlicedString::kMinLength); a longer one is a view of the whole. */
const SLICE_MIN_LENGTH = 13;

/**
 * A piece the tree stores must not be such a view: it would keep the whole source alive, and a
 * parsed project keeps its layers as bytes of their own (and the facts read from them outlive the
 * layer's text), so the source kept besides would double its size. One character beyond U+00FF
 * (QGIS writes its release name, "Białowieża", in every project) also makes the whole source two
 * bytes per character; copies are one byte per character where they can be.
 */
function keeper(source: string): Keep {
  if (/[^\u0000-\u00ff]/.test(source)) {
    return (piece) => (piece.length < SLICE_MIN_LENGTH ? piece : Buffer.from(piece, 'utf8').toString('utf8'));
  }
  // Flattening the concatenation copies the piece; the slice then views the copy, not the source.
  return (piece) => (piece.length < SLICE_MIN_LENGTH ? piece : ` ${piece}`.slice(1));
}

/** Index of the `>` closing the tag that starts at `from`, skipping `>` inside quoted values. */
function tagEnd(source: string, from: number): number {
  let quote = '';
  for (let i = from; i < source.length; i++) {
    const c = source[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return i;
    }
  }
  return -1;
}

function markupEnd(source: string, start: number): number {
  const terminators: Array<[string, string]> = [
    ['<!--', '-->'],
    ['<![CDATA[', ']]>'],
    ['<?', '?>'],
  ];
  for (const [opening, closing] of terminators) {
    if (source.startsWith(opening, start)) {
      const end = source.indexOf(closing, start + opening.length);
      return end < 0 ? -1 : end + closing.length;
    }
  }
  // <!DOCTYPE ...> possibly with an internal subset in brackets.
  const bracket = source.indexOf('[', start);
  const close = source.indexOf('>', start);
  if (bracket >= 0 && bracket < close) {
    const subsetEnd = source.indexOf(']', bracket);
    const end = subsetEnd < 0 ? -1 : source.indexOf('>', subsetEnd);
    return end < 0 ? -1 : end + 1;
  }
  return close < 0 ? -1 : close + 1;
}

/** Index just past the `</name>` that closes the element whose start tag ends at `from`. */
function closingEnd(source: string, name: string, from: number): number {
  const opening = `<${name}`;
  const closing = `</${name}>`;
  let depth = 1;
  let cursor = from;
  while (depth > 0) {
    const nextClose = source.indexOf(closing, cursor);
    if (nextClose < 0) return -1;
    let nextOpen = source.indexOf(opening, cursor);
    while (nextOpen >= 0 && nextOpen < nextClose && !/[\s/>]/.test(source[nextOpen + opening.length] ?? '')) {
      nextOpen = source.indexOf(opening, nextOpen + 1);
    }
    if (nextOpen >= 0 && nextOpen < nextClose) {
      depth++;
      cursor = nextOpen + opening.length;
    } else {
      depth--;
      cursor = nextClose + closing.length;
    }
  }
  return cursor;
}

/** Marks in a start tag of forms Steward does not write: other quotes, spacing, entities. */
const UNUSUAL_TAG = /['&\t\n\r]|\s\s|\s=|=\s|\s$/;

/** The text node of `raw`, keeping its form when Steward would escape it otherwise. */
function textNode(raw: string, keep: Keep): XmlText {
  const value = decodeEntities(raw);
  const node: XmlText = { kind: 'text', value: keep(value) };
  if (value !== raw && escapeText(value) !== raw) node.source = { markup: keep(raw), canonical: node.value };
  return node;
}

export interface ParseOptions {
  /** Names of elements kept as text (XmlDeferred) below the root, to be expanded on demand. */
  deferred?: ReadonlySet<string>;
}

/** Parses an XML document into the ordered tree of node.ts. Not validating; rejects broken nesting. */
export function parseXml(source: string, options: ParseOptions = {}): XmlDocument {
  const prolog: XmlNode[] = [];
  const epilog: XmlNode[] = [];
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const append = (node: XmlNode): void => {
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(node);
    else if (node.kind !== 'element') (root ? epilog : prolog).push(node);
  };
  const keep = keeper(source);
  const bom = source.charCodeAt(0) === 0xfeff;
  let position = bom ? 1 : 0;
  while (position < source.length) {
    const open = source.indexOf('<', position);
    const textEnd = open < 0 ? source.length : open;
    if (textEnd > position) {
      append(textNode(source.slice(position, textEnd), keep));
    }
    if (open < 0) break;
    const next = source[open + 1];
    if (next === '!' || next === '?') {
      const end = markupEnd(source, open);
      if (end < 0) throw new XmlSyntaxError(`unterminated markup at offset ${open}`);
      append({ kind: 'raw', markup: keep(source.slice(open, end)) });
      position = end;
      continue;
    }
    const end = tagEnd(source, open + 1);
    if (end < 0) throw new XmlSyntaxError(`unterminated tag at offset ${open}`);
    if (next === '/') {
      const name = source.slice(open + 2, end).trim();
      const current = stack.pop();
      if (!current || current.name !== name) {
        throw new XmlSyntaxError(`unexpected </${name}> at offset ${open}`);
      }
      // `<a></a>` keeps its form: an empty text child, as Qt writes for an empty text node.
      if (current.children.length === 0) current.children.push({ kind: 'text', value: '' });
    } else {
      const selfClosing = source[end - 1] === '/';
      const body = source.slice(open + 1, selfClosing ? end - 1 : end);
      const nameEnd = body.search(/[\s/]|$/);
      const name = body.slice(0, nameEnd);
      if (!selfClosing && stack.length > 0 && options.deferred?.has(name)) {
        const markupEnd = closingEnd(source, name, end + 1);
        if (markupEnd < 0) throw new XmlSyntaxError(`<${name}> at offset ${open} is never closed`);
        append({ kind: 'deferred', name: keep(name), utf8: Buffer.from(source.slice(open, markupEnd), 'utf8') });
        position = markupEnd;
        continue;
      }
      const node: XmlElement = {
        kind: 'element',
        name: keep(name),
        attributes: parseAttributes(body.slice(nameEnd), keep),
        children: [],
      };
      const tag = source.slice(open, selfClosing ? end - 1 : end);
      if (UNUSUAL_TAG.test(tag)) {
        const canonical = startTag(node.name, node.attributes);
        if (canonical !== tag) node.source = { markup: keep(tag), canonical };
      }
      if (stack.length === 0) {
        if (root) throw new XmlSyntaxError(`second root element <${node.name}> at offset ${open}`);
        root = node;
      } else {
        append(node);
      }
      if (!selfClosing) {
        if (stack.length >= MAX_XML_DEPTH)
          throw new XmlDepthError(`its elements are nested deeper than ${MAX_XML_DEPTH} levels (at offset ${open})`);
        stack.push(node);
      }
    }
    position = end + 1;
  }
  if (!root) throw new XmlSyntaxError('no root element');
  if (stack.length > 0) throw new XmlSyntaxError(`<${stack[stack.length - 1]?.name}> is never closed`);
  const document: XmlDocument = { prolog, root, epilog };
  if (bom) document.bom = true;
  return document;
}
