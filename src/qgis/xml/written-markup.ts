import { type XmlElement, type XmlNode } from './node.js';

/**
 * A run of a container's children as last written: the nodes, the UTF-8 they made, and where each
 * node's bytes start in it (one more offset than nodes: the end).
 */
export interface WrittenRun {
  nodes: readonly XmlNode[];
  bytes: Buffer;
  offsets: Uint32Array;
}

/**
 * Markup already written in UTF-8, kept so that writing a document again costs what changed in it:
 * elements that never change in place once written (a project's per-layer records), and, for large
 * containers, the runs of unchanging children they held when last written.
 */
export class WrittenMarkup {
  private readonly elements = new WeakMap<XmlElement, Buffer>();
  private readonly runs = new WeakMap<XmlElement, WrittenRun[]>();

  /** Takes `element` as unchanging from now on, written as `markup`. */
  remember(element: XmlElement, markup: Buffer): void {
    this.elements.set(element, markup);
  }

  markupOf(element: XmlElement): Buffer | undefined {
    return this.elements.get(element);
  }

  /** The runs of `container`'s children as last written, in order. */
  runsOf(container: XmlElement): readonly WrittenRun[] {
    return this.runs.get(container) ?? [];
  }

  keepRuns(container: XmlElement, runs: WrittenRun[]): void {
    this.runs.set(container, runs);
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

/**
 * The run `nodes` make, from the run `previous` they were written as: the bytes of the nodes kept at
 * its start and end are copied in one piece each, and only the nodes between are encoded.
 */
export function rewriteRun(
  previous: WrittenRun | undefined,
  nodes: readonly XmlNode[],
  encode: (node: XmlNode) => Buffer,
): WrittenRun {
  const before = previous ?? { nodes: [], bytes: Buffer.alloc(0), offsets: new Uint32Array(1) };
  const head = sharedHead(nodes, before.nodes);
  if (head === nodes.length && head === before.nodes.length && previous) return previous;
  const tail = sharedTail(nodes, before.nodes, head);
  const middle = nodes.slice(head, nodes.length - tail).map(encode);
  const offsets = new Uint32Array(nodes.length + 1);
  offsets.set(before.offsets.subarray(0, head + 1));
  let at = head;
  for (const piece of middle) {
    offsets[at + 1] = (offsets[at] as number) + piece.byteLength;
    at++;
  }
  const tailStart = before.offsets[before.nodes.length - tail] as number;
  const shift = (offsets[at] as number) - tailStart;
  for (let index = before.nodes.length - tail + 1; index <= before.nodes.length; index++) {
    offsets[++at] = (before.offsets[index] as number) + shift;
  }
  const bytes = Buffer.concat([
    before.bytes.subarray(0, before.offsets[head]),
    ...middle,
    before.bytes.subarray(tailStart),
  ]);
  return { nodes, bytes, offsets };
}
