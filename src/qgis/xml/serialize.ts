import { deferredMarkup, type XmlDeferred, type XmlDocument, type XmlElement, type XmlNode } from './node.js';

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

/** Markup already written for elements that have not changed since, by element. */
export type WrittenElements = WeakMap<XmlElement, string>;

/** Where a document is written to: text, and deferred elements' UTF-8 source. */
interface Sink {
  text(piece: string): void;
  deferred(node: XmlDeferred): void;
}

/** Writes the pieces of a document to the sink, one element's markup at a time. */
class Writer {
  constructor(
    private readonly sink: Sink,
    private readonly written?: WrittenElements,
  ) {}

  node(node: XmlNode): void {
    if (node.kind === 'text') this.sink.text(escapeText(node.value));
    else if (node.kind === 'raw') this.sink.text(node.markup);
    else if (node.kind === 'deferred') this.sink.deferred(node);
    else this.element(node);
  }

  element(node: XmlElement): void {
    const markup = this.written?.get(node);
    if (markup !== undefined) {
      this.sink.text(markup);
      return;
    }
    const out = this.sink;
    out.text(`<${node.name}`);
    for (const [name, value] of node.attributes) out.text(` ${name}="${escapeAttribute(value)}"`);
    if (node.children.length === 0) {
      out.text('/>');
      return;
    }
    out.text('>');
    for (const child of node.children) this.node(child);
    out.text(`</${node.name}>`);
  }

  document(document: XmlDocument): void {
    for (const node of document.prolog) this.node(node);
    this.element(document.root);
    this.sink.text('\n');
  }
}

/** Collects text; deferred elements are decoded. */
class TextSink implements Sink {
  readonly pieces: string[] = [];

  text(piece: string): void {
    this.pieces.push(piece);
  }

  deferred(node: XmlDeferred): void {
    this.pieces.push(deferredMarkup(node));
  }
}

/** The indentation between deferred siblings, encoded once: a project has a few kinds, repeated per layer. */
const encodedIndents = new Map<string, Buffer>();
const MAX_INDENTS = 64;

function encodeText(text: string): Buffer {
  if (text.length > 64 || !/^\s*$/.test(text)) return Buffer.from(text, 'utf8');
  let encoded = encodedIndents.get(text);
  if (encoded === undefined) {
    encoded = Buffer.from(text, 'utf8');
    if (encodedIndents.size < MAX_INDENTS) encodedIndents.set(text, encoded);
  }
  return encoded;
}

/** Collects UTF-8: text between deferred elements is encoded in one go, deferred elements are copied. */
class BytesSink implements Sink {
  private readonly chunks: Buffer[] = [];
  private pending: string[] = [];

  text(piece: string): void {
    this.pending.push(piece);
  }

  deferred(node: XmlDeferred): void {
    this.flush();
    this.chunks.push(node.utf8);
  }

  pieces(): Buffer[] {
    this.flush();
    return this.chunks;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(encodeText(this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join('')));
    this.pending = [];
  }
}

/** One element alone, exactly as it is written inside its document. */
export function serializeElement(element: XmlElement): string {
  const sink = new TextSink();
  new Writer(sink).element(element);
  return sink.pieces.join('');
}

/** The document's text; elements found in `written` are written as the markup it holds for them. */
export function serializeXml(document: XmlDocument, written?: WrittenElements): string {
  const sink = new TextSink();
  new Writer(sink, written).document(document);
  return sink.pieces.join('');
}

/**
 * The document's text in UTF-8, as `serializeXml` writes it, in pieces to be written one after the
 * other: only the text around deferred elements is encoded, and their bytes are not even copied.
 */
export function serializeXmlUtf8(document: XmlDocument, written?: WrittenElements): Buffer[] {
  const sink = new BytesSink();
  new Writer(sink, written).document(document);
  return sink.pieces();
}
