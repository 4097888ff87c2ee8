import { escapeText, startTag } from './escape.js';
import { text, type XmlDocument, type XmlElement, type XmlNode, type XmlText } from './node.js';
import { rewriteChildren, SMALL_PIECE_BYTES, type WrittenMarkup } from './written-markup.js';

/** A text as the file wrote it while unchanged, else as Qt writes it. */
function textMarkup(node: XmlText): string {
  return node.source?.canonical === node.value ? node.source.markup : escapeText(node.value);
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

/** Where a document is written to: text, and markup already in UTF-8 (deferred and written elements). */
interface Sink {
  text(piece: string): void;
  utf8(markup: Buffer): void;
  /** Whether the sink keeps the bytes of children it wrote before (a sink of UTF-8 does). */
  readonly keepsChildren: boolean;
}

/** Containers with fewer children are written child by child: their bytes are not worth keeping. */
const MIN_KEPT_CONTAINER = 64;

/** Writes the pieces of a document to the sink, one element's markup at a time. */
class Writer {
  constructor(
    private readonly sink: Sink,
    private readonly written?: WrittenMarkup,
  ) {}

  node(node: XmlNode): void {
    if (node.kind === 'text') this.sink.text(textMarkup(node));
    else if (node.kind === 'raw') this.sink.text(node.markup);
    else if (node.kind === 'deferred') this.sink.utf8(node.utf8);
    else this.element(node);
  }

  element(node: XmlElement): void {
    const markup = this.written?.markupOf(node);
    if (markup !== undefined) {
      this.sink.utf8(markup);
      return;
    }
    const out = this.sink;
    const tag = startTag(node.name, node.attributes);
    out.text(node.source?.canonical === tag ? node.source.markup : tag);
    if (node.children.length === 0) {
      out.text('/>');
      return;
    }
    out.text('>');
    if (this.written && out.keepsChildren && node.children.length >= MIN_KEPT_CONTAINER)
      this.children(node, this.written);
    else for (const child of node.children) this.node(child);
    out.text(`</${node.name}>`);
  }

  /**
   * A large container's children: those whose bytes stay the same (text, deferred elements, written
   * elements) from their bytes of the last write, the others afresh.
   */
  private children(container: XmlElement, written: WrittenMarkup): void {
    const children = rewriteChildren(written.childrenOf(container), container.children, {
      keptBytes: (node) => keptBytes(node, written),
      afresh: (node) => this.node(node),
      emit: (bytes) => this.sink.utf8(bytes),
    });
    written.keepChildren(container, children);
  }

  document(document: XmlDocument): void {
    if (document.bom) this.sink.text('\ufeff');
    for (const node of document.prolog) this.node(node);
    this.element(document.root);
    for (const node of document.epilog ?? [text('\n')]) this.node(node);
  }
}

/** A node's UTF-8 when it is the same each time it is written: text, deferred and written elements. */
function keptBytes(node: XmlNode, written: WrittenMarkup): Buffer | undefined {
  if (node.kind === 'text') return encodeText(textMarkup(node));
  if (node.kind === 'raw') return Buffer.from(node.markup, 'utf8');
  if (node.kind === 'deferred') return node.utf8;
  return written.markupOf(node);
}

/** Collects text; markup in UTF-8 is decoded. */
class TextSink implements Sink {
  readonly pieces: string[] = [];
  readonly keepsChildren = false;

  text(piece: string): void {
    this.pieces.push(piece);
  }

  utf8(markup: Buffer): void {
    this.pieces.push(markup.toString('utf8'));
  }
}

/** Collects UTF-8: text between large pieces already in UTF-8 is encoded in one go, those pieces are not copied. */
class BytesSink implements Sink {
  readonly keepsChildren = true;
  private readonly chunks: Buffer[] = [];
  private pending: string[] = [];
  /** Encoded text and small markup waiting to be joined into one chunk. */
  private joined: Buffer[] = [];

  text(piece: string): void {
    this.pending.push(piece);
  }

  utf8(markup: Buffer): void {
    if (markup.byteLength < SMALL_PIECE_BYTES) {
      this.encodePending();
      this.joined.push(markup);
      return;
    }
    this.flush();
    this.chunks.push(markup);
  }

  pieces(): Buffer[] {
    this.flush();
    return this.chunks;
  }

  private encodePending(): void {
    if (this.pending.length === 0) return;
    this.joined.push(encodeText(this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join('')));
    this.pending = [];
  }

  private flush(): void {
    this.encodePending();
    if (this.joined.length === 0) return;
    this.chunks.push(this.joined.length === 1 ? (this.joined[0] as Buffer) : Buffer.concat(this.joined));
    this.joined = [];
  }
}

/** One element alone, exactly as it is written inside its document. */
export function serializeElement(element: XmlElement): string {
  const sink = new TextSink();
  new Writer(sink).element(element);
  return sink.pieces.join('');
}

/** The document's text; elements found in `written` are written as the markup it holds for them. */
export function serializeXml(document: XmlDocument, written?: WrittenMarkup): string {
  const sink = new TextSink();
  new Writer(sink, written).document(document);
  return sink.pieces.join('');
}

/**
 * The document's text in UTF-8, as `serializeXml` writes it, in pieces to be written one after the
 * other: only the text around deferred and already written elements is encoded, and their bytes
 * are not even copied.
 */
export function serializeXmlUtf8(document: XmlDocument, written?: WrittenMarkup): Buffer[] {
  const sink = new BytesSink();
  new Writer(sink, written).document(document);
  return sink.pieces();
}
