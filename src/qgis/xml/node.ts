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
}

export interface XmlText {
  kind: 'text';
  value: string;
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

export function setText(target: XmlElement, value: string): void {
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
 * Appends `child` as the last element of `parent`, indented like its siblings (QGIS indents by
 * two spaces per level).
 */
export function appendChild(parent: XmlElement, child: XmlElement, depth: number): void {
  const indent = '\n' + '  '.repeat(depth + 1);
  const closing = '\n' + '  '.repeat(depth);
  const last = parent.children[parent.children.length - 1];
  if (last?.kind === 'text' && last.value.trim() === '') {
    parent.children.splice(parent.children.length - 1, 1, text(indent), child, text(closing));
  } else {
    parent.children.push(text(indent), child, text(closing));
  }
}

/** Finds or creates `<name>` under `parent`. */
export function ensureChild(parent: XmlElement, name: string, depth: number): XmlElement {
  const existing = firstChild(parent, name);
  if (existing) return existing;
  const created = element(name);
  appendChild(parent, created, depth);
  return created;
}

export function replaceChild(parent: XmlElement, oldChild: XmlElement, newChild: XmlElement): void {
  const index = parent.children.indexOf(oldChild);
  if (index < 0) throw new Error(`<${oldChild.name}> is not a child of <${parent.name}>`);
  parent.children[index] = newChild;
}

/**
 * Indents a freshly built element the way QGIS does (two spaces per level), in place: elements
 * that hold only elements get a line per child. `depth` is the level of `target` itself.
 */
export function indent(target: XmlElement, depth: number): XmlElement {
  const elements = target.children.filter((node): node is XmlElement => node.kind === 'element');
  if (elements.length === 0 || elements.length !== target.children.length) return target;
  const inner = '\n' + '  '.repeat(depth + 1);
  target.children = elements.flatMap((child) => [text(inner), indent(child, depth + 1)]);
  target.children.push(text('\n' + '  '.repeat(depth)));
  return target;
}
