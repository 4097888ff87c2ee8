import { type XmlElement, type XmlNode } from './node.js';

/** Bytes held as the buffers they were made of, so that a long run is cut and spliced without being copied. */
export interface Rope {
  parts: readonly Buffer[];
  /** Where each part ends in the rope. */
  ends: readonly number[];
}

/**
 * A large container's children as last written: the nodes, those written afresh every time (their
 * indexes, in order), and where each node's kept bytes start in `bytes` (one more offset than
 * nodes: the end; a node written afresh takes no bytes there).
 */
export interface WrittenChildren {
  nodes: readonly XmlNode[];
  afresh: readonly number[];
  offsets: Uint32Array;
  bytes: Rope;
}

/** How a container's children are written: each node's bytes to keep, or the node written afresh. */
export interface ChildWriter {
  /** The bytes of a node that are the same each time it is written; undefined to write it afresh. */
  keptBytes(node: XmlNode): Buffer | undefined;
  afresh(node: XmlNode): void;
  /** Receives the kept bytes, in order with the nodes written afresh. */
  emit(bytes: Buffer): void;
}

/**
 * Markup already written in UTF-8, kept so that writing a document again costs what changed in it:
 * elements that never change in place once written (a project's per-layer records), and, for large
 * containers, their children as last written.
 */
export class WrittenMarkup {
  private readonly elements = new WeakMap<XmlElement, Buffer>();
  private readonly containers = new WeakMap<XmlElement, WrittenChildren>();

  /** Takes `element` as unchanging from now on, written as `markup`. */
  remember(element: XmlElement, markup: Buffer): void {
    this.elements.set(element, markup);
  }

  markupOf(element: XmlElement): Buffer | undefined {
    return this.elements.get(element);
  }

  childrenOf(container: XmlElement): WrittenChildren | undefined {
    return this.containers.get(container);
  }

  keepChildren(container: XmlElement, children: WrittenChildren): void {
    this.containers.set(container, children);
  }
}

/** How many nodes `a` and `b` share from their start, by identity. */
function sharedHead(a: readonly XmlNode[], b: readonly XmlNode[]): number {
  const limit = Math.min(a.length, b.length);
  let shared = 0;
  while (shared < limit && a[shared] === b[shared]) shared++;
  return shared;
}

/** How many nodes `a` and `b` share at their end, by identity, none of the first `head`. */
function sharedTail(a: readonly XmlNode[], b: readonly XmlNode[], head: number): number {
  const limit = Math.min(a.length, b.length) - head;
  let shared = 0;
  while (shared < limit && a[a.length - 1 - shared] === b[b.length - 1 - shared]) shared++;
  return shared;
}

/** The index of the part holding the rope's byte `at`: the first that ends after it. */
function partAt(ends: readonly number[], at: number): number {
  let low = 0;
  let high = ends.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((ends[middle] as number) > at) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * Markup in UTF-8 shorter than this is copied along with the bytes around it rather than kept as a
 * piece of its own: the layer tree, drawing order and snapping hold a small record per layer, and
 * each piece handed to writev costs the event loop about a microsecond however small it is (and a
 * rope of such pieces would crumble).
 */
export const SMALL_PIECE_BYTES = 1024;
/** A rope of more parts is joined into one when written: each part is a piece handed to the disk. */
const MAX_PARTS = 64;
/**
 * Small markup is joined into parts of about this much at most. A part the journal's delta finds
 * nowhere in the last write (records written anew: half a large tree moved into a group) is compared
 * with it line by line, and one past 64 KiB is searched for across the whole base: for records new
 * but for their indentation that search finds next to nothing at several times the cost.
 */
const MAX_JOINED_BYTES = 16 * 1024;

/** Builds a rope from new pieces and runs of an old one, handing its bytes on as it goes. */
class RopeBuilder {
  private readonly parts: Buffer[] = [];
  private small: Buffer[] = [];
  private smallBytes = 0;
  private emitted = 0;
  size = 0;

  constructor(private readonly emit: (bytes: Buffer) => void) {}

  add(bytes: Buffer): void {
    if (bytes.byteLength < SMALL_PIECE_BYTES) {
      this.small.push(bytes);
      this.smallBytes += bytes.byteLength;
      if (this.smallBytes >= MAX_JOINED_BYTES) this.joinSmall();
    } else {
      this.joinSmall();
      this.parts.push(bytes);
    }
    this.size += bytes.byteLength;
  }

  /**
   * The bytes from `from` to `to` of `rope`: its parts themselves where whole, else cut from them;
   * a cut that goes on from the last part in memory (runs of one part copied in turn) extends it.
   */
  copy(rope: Rope, from: number, to: number): void {
    if (from >= to) return;
    this.joinSmall();
    this.size += to - from;
    for (let index = partAt(rope.ends, from); from < to; index++) {
      const part = rope.parts[index] as Buffer;
      const end = rope.ends[index] as number;
      const start = end - part.byteLength;
      const until = Math.min(to, end);
      this.push(from === start && until === end ? part : part.subarray(from - start, until - start));
      from = until;
    }
  }

  private push(part: Buffer): void {
    const last = this.parts.at(-1);
    if (
      this.emitted < this.parts.length &&
      last?.buffer === part.buffer &&
      last.byteOffset + last.byteLength === part.byteOffset
    )
      this.parts[this.parts.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.byteLength + part.byteLength);
    else this.parts.push(part);
  }

  /** Hands on the bytes not yet handed on: before a node written afresh, and at the end. */
  flush(): void {
    this.joinSmall();
    while (this.emitted < this.parts.length) this.emit(this.parts[this.emitted++] as Buffer);
  }

  finish(): Rope {
    this.flush();
    const parts = this.parts.length > MAX_PARTS ? [Buffer.concat(this.parts)] : this.parts;
    let end = 0;
    return { parts, ends: parts.map((part) => (end += part.byteLength)) };
  }

  private joinSmall(): void {
    if (this.small.length === 0) return;
    this.parts.push(this.small.length === 1 ? (this.small[0] as Buffer) : Buffer.concat(this.small));
    this.small = [];
    this.smallBytes = 0;
  }
}

const NOTHING_WRITTEN: WrittenChildren = {
  nodes: [],
  afresh: [],
  offsets: new Uint32Array(1),
  bytes: { parts: [], ends: [] },
};

/** Fewer nodes between those kept at the start and the end are nodes changed in place, not moved: none is looked for in the last write. */
const MIN_MOVED = 16;

/** Where each node other than text stood in `nodes` (the first place): text nodes are shared between places. */
function placesOf(nodes: readonly XmlNode[]): Map<XmlNode, number> {
  const places = new Map<XmlNode, number>();
  nodes.forEach((node, index) => {
    if (node.kind !== 'text' && !places.has(node)) places.set(node, index);
  });
  return places;
}

/**
 * Nodes looked for one by one in the last write's before their places are mapped: a layer or two
 * moved among a thousand costs as many searches of an array, not a map of the thousand.
 */
const MAX_SEARCHES = 8;

/** Where a node other than text stood in `nodes` (the first place), searched for the first few asked, then mapped. */
function placeFinder(nodes: readonly XmlNode[]): (node: XmlNode) => number | undefined {
  let places: Map<XmlNode, number> | undefined;
  let searches = 0;
  return (node) => {
    if (places === undefined && searches++ < MAX_SEARCHES) {
      const at = nodes.indexOf(node);
      return at < 0 ? undefined : at;
    }
    places ??= placesOf(nodes);
    return places.get(node);
  };
}

/**
 * Writes `nodes` from `previous`, the same container's children as last written: the nodes kept at
 * its start and end, and runs of nodes between that followed one another there too (records moved
 * among the others), are written as cuts of the old rope (their offsets copied, the nodes written
 * afresh among them written again); only the other nodes are asked for their bytes.
 */
export function rewriteChildren(
  previous: WrittenChildren | undefined,
  nodes: readonly XmlNode[],
  writer: ChildWriter,
): WrittenChildren {
  const before = previous ?? NOTHING_WRITTEN;
  const head = sharedHead(nodes, before.nodes);
  if (head === nodes.length && head === before.nodes.length && before.afresh.length === 0) {
    // The same children, none written afresh: the same bytes, kept as they were.
    for (const part of before.bytes.parts) writer.emit(part);
    return before;
  }
  const tail = sharedTail(nodes, before.nodes, head);
  const offsets = new Uint32Array(nodes.length + 1);
  const afresh: number[] = [];
  const rope = new RopeBuilder((bytes) => writer.emit(bytes));
  const writeAfresh = (index: number): void => {
    afresh.push(index);
    rope.flush();
    writer.afresh(nodes[index] as XmlNode);
  };
  /** Nodes `from` to `to`, the same as those of `before` from `oldFrom`. */
  const reuse = (from: number, to: number, oldFrom: number): void => {
    const oldTo = oldFrom + to - from;
    const start = before.offsets[oldFrom] as number;
    const shift = rope.size - start;
    offsets.set(before.offsets.subarray(oldFrom, oldTo), from);
    if (shift !== 0) for (let index = from; index < to; index++) offsets[index] = (offsets[index] as number) + shift;
    let copied = start;
    for (const index of before.afresh) {
      if (index < oldFrom || index >= oldTo) continue;
      const at = before.offsets[index] as number;
      rope.copy(before.bytes, copied, at);
      copied = at;
      writeAfresh(index + from - oldFrom);
    }
    rope.copy(before.bytes, copied, before.offsets[oldTo] as number);
  };
  reuse(0, head, 0);
  const end = nodes.length - tail;
  const placeOf = placeFinder(before.nodes);
  for (let index = head; index < end;) {
    const node = nodes[index] as XmlNode;
    const old = node.kind === 'text' || end - head < MIN_MOVED ? undefined : placeOf(node);
    if (old !== undefined) {
      let run = 1;
      while (index + run < end && nodes[index + run] === before.nodes[old + run]) run++;
      reuse(index, index + run, old);
      index += run;
      continue;
    }
    offsets[index] = rope.size;
    const bytes = writer.keptBytes(node);
    if (bytes === undefined) writeAfresh(index);
    else rope.add(bytes);
    index++;
  }
  reuse(nodes.length - tail, nodes.length, before.nodes.length - tail);
  offsets[nodes.length] = rope.size;
  return { nodes: nodes.slice(), afresh, offsets, bytes: rope.finish() };
}
