/**
 * Elements cut out of a document's UTF-8 bytes without parsing it: what a large project holds of
 * one kind (its `<maplayer>`s) read at the cost of a search, byte for byte as the parser keeps them
 * deferred. Only plain markup is cut; anything a search could misread is left to the parser.
 */

const GT = 0x3e;
const SLASH = 0x2f;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;

/** Whether the byte after an element's name ends it: white space, `>` or `/`. */
function endsName(byte: number | undefined): boolean {
  return byte === GT || byte === SLASH || byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

/** The next start tag `<name` (and not of a longer name) from `from`, before `end`; -1 when none. */
function startTag(source: Buffer, name: string, from: number, end: number): number {
  for (let at = source.indexOf(`<${name}`, from); at >= 0 && at < end; at = source.indexOf(`<${name}`, at + 1)) {
    if (endsName(source[at + name.length + 1])) return at;
  }
  return -1;
}

/** Index of the `>` closing the tag that starts at `from`, skipping quoted values; -1 when none. */
function tagEnd(source: Buffer, from: number): number {
  let quote = 0;
  for (let at = from; at < source.length; at++) {
    const byte = source[at];
    if (quote) {
      if (byte === quote) quote = 0;
    } else if (byte === QUOTE || byte === APOSTROPHE) quote = byte;
    else if (byte === GT) return at;
  }
  return -1;
}

/** The `<container>` element's inside (the first), as a range of `source`; undefined when it has none. */
function inside(source: Buffer, container: string): { start: number; end: number } | undefined {
  const open = startTag(source, container, 0, source.length);
  const start = open < 0 ? -1 : tagEnd(source, open) + 1;
  const end = start <= 0 ? -1 : source.indexOf(`</${container}>`, start);
  return end < 0 ? undefined : { start, end };
}

/**
 * The end of the element `<name>` that starts at `open`, the next such element starting at `next`
 * (or the part ending there): just past its empty tag, or past the last closing tag before `next`;
 * -1 when it has none, as when another `<name>` starts inside it (the next one is then that one).
 */
function elementEnd(source: Buffer, name: string, open: number, next: number): number {
  const endOfTag = tagEnd(source, open);
  if (endOfTag < 0 || endOfTag >= next) return -1;
  if (source[endOfTag - 1] === SLASH) return endOfTag + 1;
  const closing = `</${name}>`;
  const close = source.lastIndexOf(closing, next - closing.length);
  return close <= endOfTag ? -1 : close + closing.length;
}

/**
 * The `<name>` elements inside the first `<container>` of `source`, each as its bytes from `<` to
 * the end of its closing tag (or of its empty tag); undefined when that part holds comments, CDATA,
 * processing instructions or a `<name>` inside another, which only a parser reads right.
 */
export function elementBytes(source: Buffer, container: string, name: string): Buffer[] | undefined {
  const range = inside(source, container);
  const part = range && source.subarray(range.start, range.end);
  if (!range || !part || part.includes('<!') || part.includes('<?')) return undefined;
  const elements: Buffer[] = [];
  for (let open = startTag(source, name, range.start, range.end); open >= 0;) {
    const next = startTag(source, name, open + 1, range.end);
    const end = elementEnd(source, name, open, next < 0 ? range.end : next);
    if (end < 0) return undefined;
    elements.push(source.subarray(open, end));
    open = next;
  }
  return elements;
}
