import { type Layout, lineBreak, QGIS_LAYOUT } from './layout.js';

/**
 * A small ordered XML tree, enough to edit QGIS documents without losing anything: elements keep
 * their attribute order, and text (including indentation), comments, CDATA and the prolog are kept
 * as they were read.
 */
export interface XmlElement {
  kind: 'element';
  name: string;
  attributes: Map<string, string>;
  children: XmlNode[];
  /** The start tag as the file wrote it, when Steward would write it otherwise (quotes, spacing, entities). */
  source?: WrittenForm;
}

export interface XmlText {
  kind: 'text';
  value: string;
  /** The text as the file wrote it, when Steward would escape it otherwise (`&gt;`, `&apos;`, `&#233;`). */
  source?: WrittenForm;
}

/**
 * How the file wrote a start tag or a text, and the form Steward would write then: the file's form
 * is written back as long as Steward's form of the node is still that one (nothing was changed).
 */
export interface WrittenForm {
  markup: string;
  /** Steward's start tag of the element, or the text's value, when it was read. */
  canonical: string;
}

/** Comments, CDATA sections, processing instructions and the DOCTYPE, written back verbatim. */
export interface XmlRaw {
  kind: 'raw';
  markup: string;
}

/**
 * An element kept as its source text, in UTF-8, until someone needs its inside: large repeated
 * subtrees (a project's `<maplayer>`s) cost only their text, and are written back unchanged, the
 * bytes as they are when a whole document is written in UTF-8.
 */
export interface XmlDeferred {
  kind: 'deferred';
  name: string;
  utf8: Buffer;
}

/** A deferred element's source text. */
export function deferredMarkup(node: XmlDeferred): string {
  return node.utf8.toString('utf8');
}

export type XmlNode = XmlElement | XmlText | XmlRaw | XmlDeferred;

export interface XmlDocument {
  /** Everything before the root element (XML declaration, DOCTYPE, comments, whitespace). */
  prolog: XmlNode[];
  root: XmlElement;
  /** Everything after the root element, as read; a line break when the document was built here. */
  epilog?: XmlNode[];
  /** Whether the file began with a byte order mark. */
  bom?: boolean;
}

export function element(name: string, attributes: Record<string, string> = {}, children: XmlNode[] = []): XmlElement {
  return { kind: 'element', name, attributes: new Map(Object.entries(attributes)), children };
}

export function text(value: string): XmlText {
  return { kind: 'text', value };
}

/** `<name>value</name>` */
export function textElement(name: string, value: string, attributes: Record<string, string> = {}): XmlElement {
  return element(name, attributes, [text(value)]);
}

export function childElements(parent: XmlElement, name?: string): XmlElement[] {
  const found: XmlElement[] = [];
  for (const node of parent.children) {
    if (node.kind === 'element' && (name === undefined || node.name === name)) found.push(node);
  }
  return found;
}

export function firstChild(parent: XmlElement, name: string): XmlElement | undefined {
  for (const node of parent.children) {
    if (node.kind === 'element' && node.name === name) return node;
  }
  return undefined;
}

/** Follows a path of child names, e.g. `path(layer, 'srs', 'spatialrefsys', 'authid')`. */
export function path(parent: XmlElement, ...names: string[]): XmlElement | undefined {
  let current: XmlElement | undefined = parent;
  for (const name of names) {
    if (current === undefined) return undefined;
    current = firstChild(current, name);
  }
  return current;
}

export function textContent(node: XmlNode | undefined): string {
  if (node === undefined) return '';
  if (node.kind === 'text') return node.value;
  if (node.kind === 'raw') return node.markup.startsWith('<![CDATA[') ? node.markup.slice(9, -3) : '';
  if (node.kind === 'deferred') throw new Error(`<${node.name}> must be expanded before its text is read`);
  const [only] = node.children;
  return node.children.length === 1 ? textContent(only) : node.children.map(textContent).join('');
}

export function childText(parent: XmlElement, ...names: string[]): string {
  return textContent(path(parent, ...names));
}

/** Sets an element's text; one that has the text already stays as it was written. */
export function setText(target: XmlElement, value: string): void {
  if (target.children.length === 0 ? value === '' : textContent(target) === value) return;
  target.children = [text(value)];
}

export function removeChild(parent: XmlElement, child: XmlNode): void {
  const index = parent.children.indexOf(child);
  if (index < 0) return;
  // Drop the indentation that preceded the element too, so removals leave no blank lines.
  const before = parent.children[index - 1];
  const start = before?.kind === 'text' && before.value.trim() === '' ? index - 1 : index;
  parent.children.splice(start, index - start + 1);
}

/**
 * Appends `child` as the last element of `parent` (at `depth`), indented like its siblings in the
 * document's layout.
 */
export function appendChild(parent: XmlElement, child: XmlElement, depth: number, layout: Layout = QGIS_LAYOUT): void {
  const indent = lineBreak(layout, depth + 1);
  const closing = lineBreak(layout, depth);
  const last = parent.children[parent.children.length - 1];
  if (last?.kind === 'text' && last.value.trim() === '') {
    parent.children.splice(parent.children.length - 1, 1, text(indent), child, text(closing));
  } else {
    parent.children.push(text(indent), child, text(closing));
  }
}

/** Finds or creates `<name>` under `parent`. */
export function ensureChild(parent: XmlElement, name: string, depth: number, layout: Layout = QGIS_LAYOUT): XmlElement {
  const existing = firstChild(parent, name);
  if (existing) return existing;
  const created = element(name);
  appendChild(parent, created, depth, layout);
  return created;
}

export function replaceChild(parent: XmlElement, oldChild: XmlElement, newChild: XmlElement): void {
  const index = parent.children.indexOf(oldChild);
  if (index < 0) throw new Error(`<${oldChild.name}> is not a child of <${parent.name}>`);
  parent.children[index] = newChild;
}

/**
 * Indents a freshly built element in the document's layout (QGIS's: two spaces per level), in
 * place: elements that hold only elements get a line per child. `depth` is the level of `target`.
 */
export function indent(target: XmlElement, depth: number, layout: Layout = QGIS_LAYOUT): XmlElement {
  const elements = target.children.filter((node): node is XmlElement => node.kind === 'element');
  if (elements.length === 0 || elements.length !== target.children.length) return target;
  const inner = lineBreak(layout, depth + 1);
  target.children = elements.flatMap((child) => [text(inner), indent(child, depth + 1, layout)]);
  target.children.push(text(lineBreak(layout, depth)));
  return target;
}
