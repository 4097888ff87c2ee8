/**
 * A file's new content described against a base version of it: runs of the base's bytes, by
 * offset, and the bytes that are new. The project journal stores such deltas, so a write of a large
 * project makes durable what changed rather than the whole file.
 */

/** A run of the base's bytes. */
export interface CopyRun {
  kind: 'copy';
  offset: number;
  length: number;
}

/** Bytes that are not in the base where the new content has them. */
export interface NewBytes {
  kind: 'bytes';
  bytes: Uint8Array;
}

export type DeltaOp = CopyRun | NewBytes;

/** A piece's bytes sampled at a few places, with its length: pieces that differ rarely share one. */
const SAMPLES = 8;
function fingerprint(piece: Uint8Array): string {
  const step = Math.max(1, Math.floor(piece.byteLength / SAMPLES));
  const sampled: number[] = [piece.byteLength];
  for (let at = 0; at < piece.byteLength && sampled.length <= SAMPLES; at += step) sampled.push(piece[at] as number);
  return sampled.join(',');
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** How many bytes `a` and `b` share from their start (or, with `fromEnd`, from their end). */
function sharedLength(a: Uint8Array, b: Uint8Array, fromEnd = false): number {
  let low = 0;
  let high = Math.min(a.byteLength, b.byteLength);
  const run = (bytes: Uint8Array, length: number) =>
    fromEnd ? bytes.subarray(bytes.byteLength - length) : bytes.subarray(0, length);
  // Binary search on whole-run equality: each probe is one memcmp, so the search costs little more than one.
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (equalBytes(run(a, middle), run(b, middle))) low = middle;
    else high = middle - 1;
  }
  return low;
}

interface BasePiece {
  bytes: Uint8Array;
  offset: number;
}

/** Collects operations, joining copies of adjacent runs. */
class DeltaBuilder {
  readonly ops: DeltaOp[] = [];

  copy(offset: number, length: number): void {
    if (length === 0) return;
    const last = this.ops.at(-1);
    if (last?.kind === 'copy' && last.offset + last.length === offset) last.length += length;
    else this.ops.push({ kind: 'copy', offset, length });
  }

  bytes(bytes: Uint8Array): void {
    if (bytes.byteLength > 0) this.ops.push({ kind: 'bytes', bytes });
  }
}

/**
 * A version of a file held as the pieces it was written from. Pieces of a later version are found
 * in it by identity (the same buffer) or by content; a piece found in neither is compared with the
 * base piece that follows the last one found, and only what differs between the two is new.
 */
export class DeltaBase {
  private readonly pieces: BasePiece[] = [];
  private readonly indexByPiece = new Map<Uint8Array, number>();
  private readonly indexesByFingerprint = new Map<string, number[]>();
  readonly size: number;

  constructor(pieces: readonly Uint8Array[]) {
    let offset = 0;
    for (const bytes of pieces) {
      if (bytes.byteLength === 0) continue;
      const index = this.pieces.push({ bytes, offset }) - 1;
      this.indexByPiece.set(bytes, index);
      const key = fingerprint(bytes);
      const indexes = this.indexesByFingerprint.get(key);
      if (indexes) indexes.push(index);
      else this.indexesByFingerprint.set(key, [index]);
      offset += bytes.byteLength;
    }
    this.size = offset;
  }

  /** The operations that make `pieces`, joined, out of this base. */
  delta(pieces: readonly Uint8Array[]): DeltaOp[] {
    const builder = new DeltaBuilder();
    let next = 0;
    for (const piece of pieces) {
      if (piece.byteLength === 0) continue;
      const found = this.find(piece);
      if (found !== undefined) {
        const base = this.pieces[found] as BasePiece;
        builder.copy(base.offset, base.bytes.byteLength);
        next = found + 1;
      } else {
        this.differences(piece, this.pieces[next], builder);
      }
    }
    return builder.ops;
  }

  private find(piece: Uint8Array): number | undefined {
    const same = this.indexByPiece.get(piece);
    if (same !== undefined) return same;
    return this.indexesByFingerprint
      .get(fingerprint(piece))
      ?.find((index) => equalBytes((this.pieces[index] as BasePiece).bytes, piece));
  }

  /** `piece` as the bytes it shares with `base` at its start and end, and the new bytes between. */
  private differences(piece: Uint8Array, base: BasePiece | undefined, builder: DeltaBuilder): void {
    if (!base) {
      builder.bytes(piece);
      return;
    }
    const head = sharedLength(piece, base.bytes);
    const tail = sharedLength(piece.subarray(head), base.bytes.subarray(head), true);
    builder.copy(base.offset, head);
    builder.bytes(piece.subarray(head, piece.byteLength - tail));
    builder.copy(base.offset + base.bytes.byteLength - tail, tail);
  }
}

/** The content the operations make out of `base`; throws when a run lies outside it. */
export function applyDelta(base: Uint8Array, ops: readonly DeltaOp[]): Buffer {
  return Buffer.concat(
    ops.map((op) => {
      if (op.kind === 'bytes') return op.bytes;
      if (op.offset + op.length > base.byteLength) throw new Error('a delta copies bytes its base does not have');
      return base.subarray(op.offset, op.offset + op.length);
    }),
  );
}
