/**
 * How a version's content and styles are stored: a keyframe is the whole project XML, a delta the
 * operations that make it out of the version before (content-delta.ts), each deflated. A version is
 * rebuilt from the keyframe before it by applying the deltas in turn, as runs of their bytes, joined once.
 */
import { promisify } from 'node:util';
import { constants, deflate, deflateSync, inflateSync } from 'node:zlib';

import { MarkupMemo } from '../qgis/xml/markup-memo.js';
import { ContentRuns, type DeltaOp, encodeOps } from './content-delta.js';
import { type VersionContent } from './version-store.js';

const deflateAsync = promisify(deflate);
/** Fast over small: a keyframe of a large project is deflated while its write waits. */
const LEVEL = { level: constants.Z_BEST_SPEED };
/**
 * Keyframes inflated lately, by their project, id and identity (a stored version never changes):
 * the versions of one chain (a restore, a difference, the version before) are rebuilt from the same
 * one, whose inflating costs more than applying the chain's deltas. A few, as each holds a whole project.
 */
const INFLATED = new MarkupMemo<Buffer>(4);

/** A keyframe's payload, deflated off the event loop. */
export function encodeKeyframe(pieces: readonly Uint8Array[]): Promise<Buffer> {
  return deflateAsync(Buffer.concat(pieces), LEVEL);
}

/** The payloads made of each delta's operations: a version's delta may be made while its write is under way. */
const ENCODED_DELTAS = new WeakMap<readonly DeltaOp[], Buffer>();

/** A delta's payload: the count of operations, then the operations; made once for the same operations. */
export function encodeDelta(ops: readonly DeltaOp[]): Buffer {
  let payload = ENCODED_DELTAS.get(ops);
  if (payload === undefined) {
    const count = Buffer.alloc(4);
    count.writeUInt32LE(ops.length);
    payload = deflateSync(Buffer.concat([count, ...encodeOps(ops)]), LEVEL);
    ENCODED_DELTAS.set(ops, payload);
  }
  return payload;
}

/**
 * A stored version of the project `project` names, as memos of this process know it: a version is
 * never changed once stored, and one of the same id stored since (its project removed and made
 * again) has another identity.
 */
export function versionKey(project: string, version: VersionContent): string {
  return `${project}\u0000${version.id}\u0000${version.identity}\u0000${version.payload.byteLength}`;
}

/** The chain's keyframe as runs to apply its deltas to, and those deltas. */
function chainStart(
  project: string,
  chain: readonly VersionContent[],
): { content: ContentRuns; deltas: VersionContent[] } {
  const [keyframe, ...deltas] = chain;
  if (!keyframe?.keyframe) throw new Error('a chain of versions starts with a keyframe');
  return {
    content: new ContentRuns(INFLATED.byKey(versionKey(project, keyframe), () => inflateSync(keyframe.payload))),
    deltas,
  };
}

function applyStored(content: ContentRuns, delta: VersionContent): void {
  const bytes = inflateSync(delta.payload);
  content.apply(bytes, 4, bytes.readUInt32LE(0));
}

/** The content of the last version of `chain`, of the project `project` names: its keyframe with the deltas after it applied in turn. */
export function decodeChain(project: string, chain: readonly VersionContent[]): Buffer {
  const { content, deltas } = chainStart(project, chain);
  for (const delta of deltas) applyStored(content, delta);
  return content.join();
}

/** The content of each version of `chain` in turn, oldest first. */
export function* decodeEachOfChain(project: string, chain: readonly VersionContent[]): Generator<Buffer> {
  const { content, deltas } = chainStart(project, chain);
  yield content.join();
  for (const delta of deltas) {
    applyStored(content, delta);
    yield content.join();
  }
}

/** A project's styles by name (their QML), as a version keeps them. */
export function encodeStyles(styles: ReadonlyMap<string, string>): Buffer {
  return deflateSync(JSON.stringify(Object.fromEntries(styles)), LEVEL);
}

export function decodeStyles(bytes: Buffer): Map<string, string> {
  return new Map(Object.entries(JSON.parse(inflateSync(bytes).toString('utf8')) as Record<string, string>));
}
