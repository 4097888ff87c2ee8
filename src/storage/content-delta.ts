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

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** Whether `a` and `b` hold the same bytes from `start` to `end`. */
function sameRun(a: Uint8Array, b: Uint8Array, start: number, end: number): boolean {
  return equalBytes(a.subarray(start, end), b.subarray(start, end));
}

/**
 * How many bytes `a` and `b` share from their start. Runs of doubling length are compared until
 * one differs, then that run is halved: the cost follows the shared length, not the inputs' size.
 */
function sharedLength(a: Uint8Array, b: Uint8Array): number {
  const limit = Math.min(a.byteLength, b.byteLength);
  let low = 0;
  let high = limit;
  for (let step = 16; low < limit; step *= 2) {
    const end = Math.min(limit, low + step);
    if (!sameRun(a, b, low, end)) {
      high = end - 1;
      break;
    }
    low = end;
  }
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (sameRun(a, b, low, middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

const NEWLINE = 0x0a;
/** Shorter runs are taken as new bytes: a copy takes 17 bytes of a journal record. */
const MIN_COPY = 32;
/**
 * Lines looked for in their base pieces in one delta, each a search of at most SEARCH_WINDOW bytes:
 * lines of layers added since the checkpoint are found nowhere, and each search for one is lost time.
 */
const MAX_PROBES = 256;
/** How far past the point reached in a base piece a line is looked for: records removed there. */
const SEARCH_WINDOW = 16 * 1024;
/**
 * How far before the point reached a line not found after it is looked for: a record moved up one
 * place among like ones (a layer moved to the top of the tree) otherwise leaves every record after
 * it compared with the one that follows it, each line new.
 */
const LOOK_BACK = 4 * 1024;
/**
 * Pieces at least this long found nowhere are compared with the base pieces that follow the one
 * they start as, one after another (a whole project made afresh in one piece); shorter ones with
 * that one alone, which is what a changed layer or record is.
 */
const MIN_SPANNING = 64 * 1024;
/** The base pieces after the last one found that a piece found nowhere is compared with (one removed, or a few). */
const CANDIDATES = 4;

/** Where `needle` is in `haystack` within `room` bytes of `from`, or -1. */
function searchWindow(haystack: Uint8Array, needle: Uint8Array, from: number, room: number): number {
  const window = haystack.subarray(from, from + room);
  const found = Buffer.from(window.buffer, window.byteOffset, window.byteLength).indexOf(needle);
  return found < 0 ? found : from + found;
}

interface BasePiece {
  bytes: Uint8Array;
  offset: number;
}

/**
 * Pieces at least this long are also found inside base pieces whose memory holds them (a later
 * version cut from an earlier one's buffers); shorter ones are cheap to compare by their bytes.
 */
const MIN_SHARED_MEMORY = 1024;

/** Where `piece` lies in the memory of one of `pieces` (the last to start at or before it), by index. */
function holding(pieces: readonly BasePiece[], candidates: readonly number[], piece: Uint8Array): number | undefined {
  let low = 0;
  let high = candidates.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((pieces[candidates[middle] as number] as BasePiece).bytes.byteOffset <= piece.byteOffset) low = middle;
    else high = middle - 1;
  }
  const index = candidates[low];
  const base = index === undefined ? undefined : (pieces[index] as BasePiece).bytes;
  if (!base || base.byteOffset > piece.byteOffset) return undefined;
  return piece.byteOffset + piece.byteLength <= base.byteOffset + base.byteLength ? index : undefined;
}

/** Whether `b` starts in the same memory where `a` ends. */
function adjoins(a: Uint8Array, b: Uint8Array): boolean {
  return a.buffer === b.buffer && a.byteOffset + a.byteLength === b.byteOffset;
}

/** Collects operations, joining copies of adjacent runs and new bytes that follow one another. */
class DeltaBuilder {
  readonly ops: DeltaOp[] = [];
  probesLeft = MAX_PROBES;

  copy(offset: number, length: number): void {
    if (length === 0) return;
    const last = this.ops.at(-1);
    if (last?.kind === 'copy' && last.offset + last.length === offset) last.length += length;
    else this.ops.push({ kind: 'copy', offset, length });
  }

  /** New bytes that follow the last ones in memory (the next line of a changed piece) extend them. */
  bytes(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    const last = this.ops.at(-1);
    if (last?.kind === 'bytes' && adjoins(last.bytes, bytes)) {
      last.bytes = new Uint8Array(last.bytes.buffer, last.bytes.byteOffset, last.bytes.byteLength + bytes.byteLength);
    } else this.ops.push({ kind: 'bytes', bytes });
  }
}

/**
 * A version of a file held as the pieces it was written from. A piece of a later version is looked
 * for where the last one found leads to expect it (the same buffer, or the same bytes), then
 * anywhere as the same buffer; a piece found nowhere is compared with the base pieces expected
 * next, and only what differs is new.
 */
export class DeltaBase {
  /** The bases made of each write's pieces: the project's journal and its versions diff the next write against the same one. */
  private static readonly made = new WeakMap<readonly Uint8Array[], DeltaBase>();

  /** The base of `pieces`, made once for the same pieces. */
  static of(pieces: readonly Uint8Array[]): DeltaBase {
    const known = DeltaBase.made.get(pieces);
    if (known) return known;
    const base = new DeltaBase(pieces);
    DeltaBase.made.set(pieces, base);
    return base;
  }

  private readonly pieces: BasePiece[] = [];
  /** The last delta made, by the pieces it was made for: asked again for the same pieces, it is not made again. */
  private last: { pieces: readonly Uint8Array[]; ops: readonly DeltaOp[] } | undefined;
  private readonly indexByPiece = new Map<Uint8Array, number>();
  /** The large pieces by the memory they lie in, in the order of where they start in it. */
  private readonly indexesByMemory = new Map<ArrayBufferLike, number[]>();
  readonly size: number;

  constructor(pieces: readonly Uint8Array[]) {
    let offset = 0;
    for (const bytes of pieces) {
      if (bytes.byteLength === 0) continue;
      const index = this.pieces.push({ bytes, offset }) - 1;
      this.indexByPiece.set(bytes, index);
      if (bytes.byteLength >= MIN_SHARED_MEMORY)
        this.indexesByMemory.set(bytes.buffer, [...(this.indexesByMemory.get(bytes.buffer) ?? []), index]);
      offset += bytes.byteLength;
    }
    for (const indexes of this.indexesByMemory.values()) indexes.sort((a, b) => this.start(a) - this.start(b));
    this.size = offset;
  }

  private rememberMemory(memory: ArrayBufferLike, index: number): void {
    const indexes = this.indexesByMemory.get(memory);
    if (indexes) indexes.push(index);
    else this.indexesByMemory.set(memory, [index]);
  }

  private start(index: number): number {
    return (this.pieces[index] as BasePiece).bytes.byteOffset;
  }

  /** The operations that make `pieces`, joined, out of this base. */
  delta(pieces: readonly Uint8Array[]): readonly DeltaOp[] {
    if (this.last?.pieces === pieces) return this.last.ops;
    const ops = this.make(pieces);
    this.last = { pieces, ops };
    return ops;
  }

  private make(pieces: readonly Uint8Array[]): DeltaOp[] {
    const builder = new DeltaBuilder();
    let next = 0;
    for (const piece of pieces) {
      if (piece.byteLength === 0) continue;
      const found = this.find(piece, next);
      const within = found === undefined ? this.within(piece) : undefined;
      if (found !== undefined) {
        const base = this.pieces[found] as BasePiece;
        builder.copy(base.offset, base.bytes.byteLength);
        next = found + 1;
      } else if (within !== undefined) {
        const base = this.pieces[within] as BasePiece;
        const from = piece.byteOffset - base.bytes.byteOffset;
        builder.copy(base.offset + from, piece.byteLength);
        next = from + piece.byteLength === base.bytes.byteLength ? within + 1 : within;
      } else {
        const likeliest = this.likeliest(piece, next);
        if (!likeliest) {
          builder.bytes(piece);
          continue;
        }
        const after = this.differences(piece, likeliest.index, builder);
        // A piece that starts as a base piece does is that piece changed: the next is expected after it.
        if (likeliest.shared >= MIN_COPY) next = Math.max(after, likeliest.index + 1);
      }
    }
    return builder.ops;
  }

  /** The base piece `piece` is: the expected one (at `next`) if it has the same bytes, else the same buffer anywhere. */
  private find(piece: Uint8Array, next: number): number | undefined {
    const expected = this.pieces[next]?.bytes;
    if (expected === piece || (expected?.byteLength === piece.byteLength && equalBytes(expected, piece))) return next;
    return this.indexByPiece.get(piece);
  }

  /**
   * The base piece whose memory holds a large `piece`: it was cut from it, and as written pieces are
   * never changed in place, holds its bytes.
   */
  private within(piece: Uint8Array): number | undefined {
    const candidates = piece.byteLength >= MIN_SHARED_MEMORY ? this.indexesByMemory.get(piece.buffer) : undefined;
    return candidates && holding(this.pieces, candidates, piece);
  }

  /** Of the base pieces expected next, the one that starts with more of `piece`'s bytes, and how many. */
  private likeliest(piece: Uint8Array, next: number): { index: number; shared: number } | undefined {
    let best: { index: number; shared: number } | undefined;
    const end = Math.min(this.pieces.length, next + CANDIDATES);
    for (let index = next; index < end; index++) {
      const shared = sharedLength(piece, (this.pieces[index] as BasePiece).bytes);
      if (!best || shared > best.shared) best = { index, shared };
    }
    return best;
  }

  /**
   * `piece` as runs of the base, from base piece `start` on, and new bytes, read line by line: where
   * the two part, the next line of `piece` is looked for further on in the base (a record removed
   * there) or taken as new (a record added), so that several records changed in one piece cost only
   * their own lines. A spanning piece that runs past its base piece goes on in the base pieces
   * after it (a project made afresh in one piece: a version restored). Answers the base piece
   * expected next.
   */
  private differences(piece: Uint8Array, start: number, builder: DeltaBuilder): number {
    const spanning = piece.byteLength >= MIN_SPANNING;
    let index = start;
    let from = 0;
    let rest = piece;
    while (rest.byteLength > 0) {
      const base = this.pieces[index] as BasePiece;
      if (spanning && from === base.bytes.byteLength && index + 1 < this.pieces.length) {
        index += 1;
        from = 0;
        continue;
      }
      const shared = sharedLength(rest, base.bytes.subarray(from));
      // A run to the end of its base piece may go on in the next one: copied however short.
      if (shared >= MIN_COPY || (spanning && shared > 0 && from + shared === base.bytes.byteLength)) {
        builder.copy(base.offset + from, shared);
        rest = rest.subarray(shared);
        from += shared;
        continue;
      }
      const line = rest.subarray(0, rest.indexOf(NEWLINE) + 1 || rest.byteLength);
      // The line, and the next ones if it is short: a run long enough to copy.
      const probe = rest.subarray(0, Math.max(line.byteLength, MIN_COPY));
      const found =
        probe.byteLength >= MIN_COPY && builder.probesLeft-- > 0
          ? this.search(probe, index, from, spanning)
          : undefined;
      if (found) {
        [index, from] = found;
        continue;
      }
      builder.bytes(line);
      rest = rest.subarray(line.byteLength);
    }
    return from === (this.pieces[index] as BasePiece).bytes.byteLength ? index + 1 : index;
  }

  /**
   * Where `probe` is within SEARCH_WINDOW bytes of the base from byte `from` of base piece `index`
   * on, in that piece alone unless `spanning`, else within LOOK_BACK bytes before it in that piece,
   * as a piece and a byte of it.
   */
  private search(probe: Uint8Array, index: number, from: number, spanning: boolean): [number, number] | undefined {
    let room = SEARCH_WINDOW;
    const end = spanning ? this.pieces.length : index + 1;
    for (let at = index; at < end && room > 0; at++) {
      const bytes = (this.pieces[at] as BasePiece).bytes;
      const start = at === index ? from : 0;
      const found = searchWindow(bytes, probe, start, room);
      if (found >= 0) return [at, found];
      room -= bytes.byteLength - start;
    }
    const behind = Math.max(0, from - LOOK_BACK);
    const back = searchWindow((this.pieces[index] as BasePiece).bytes, probe, behind, from - behind);
    return back < 0 ? undefined : [index, back];
  }
}

const COPY = 0;
const BYTES = 1;
/** An operation's fields: its kind, then a copy's offset and length, or the length of new bytes. */
const COPY_FIELDS = 17;
const BYTES_FIELDS = 5;

/** The operations' bytes, new bytes not copied: the journal's records and the versions of a project hold them. */
export function encodeOps(ops: readonly DeltaOp[]): Buffer[] {
  const out: Buffer[] = [];
  for (const op of ops) {
    const fields = Buffer.alloc(op.kind === 'copy' ? COPY_FIELDS : BYTES_FIELDS);
    if (op.kind === 'copy') {
      fields.writeUInt8(COPY, 0);
      fields.writeDoubleLE(op.offset, 1);
      fields.writeDoubleLE(op.length, 9);
      out.push(fields);
    } else {
      fields.writeUInt8(BYTES, 0);
      fields.writeUInt32LE(op.bytes.byteLength, 1);
      out.push(fields, Buffer.from(op.bytes.buffer, op.bytes.byteOffset, op.bytes.byteLength));
    }
  }
  return out;
}

/** `count` operations encoded by `encodeOps` from byte `at` of `bytes`; new bytes are views of `bytes`. */
export function decodeOps(bytes: Buffer, at: number, count: number): DeltaOp[] {
  const ops: DeltaOp[] = [];
  for (let left = count; left > 0; left--) {
    if (bytes.readUInt8(at) === COPY) {
      ops.push({ kind: 'copy', offset: bytes.readDoubleLE(at + 1), length: bytes.readDoubleLE(at + 9) });
      at += COPY_FIELDS;
    } else {
      const length = bytes.readUInt32LE(at + 1);
      ops.push({ kind: 'bytes', bytes: bytes.subarray(at + BYTES_FIELDS, at + BYTES_FIELDS + length) });
      at += BYTES_FIELDS + length;
    }
  }
  return ops;
}

/** Where each piece starts in the content the pieces make, and where the last ends. */
function pieceStarts(pieces: readonly Uint8Array[]): number[] {
  const starts = [0];
  for (const piece of pieces) starts.push((starts.at(-1) as number) + piece.byteLength);
  return starts;
}

/** The index of the piece holding byte `offset`: the last whose start is at or before it. */
function pieceAt(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 2;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * The content the operations make out of `base`, both in pieces: views of the base's pieces and
 * the new bytes, nothing copied. Deltas applied in turn this way cost their operations, not the
 * content's size, which is joined once at the end. Throws when a run lies outside the base.
 */
export function applyDeltaToPieces(base: readonly Uint8Array[], ops: readonly DeltaOp[]): Uint8Array[] {
  const starts = pieceStarts(base);
  const size = starts.at(-1) as number;
  const out: Uint8Array[] = [];
  for (const op of ops) {
    if (op.kind === 'bytes') {
      out.push(op.bytes);
      continue;
    }
    if (op.offset + op.length > size) throw new Error('a delta copies bytes its base does not have');
    let offset = op.offset;
    const end = op.offset + op.length;
    for (let index = pieceAt(starts, offset); offset < end; index++) {
      const start = starts[index] as number;
      const piece = base[index] as Uint8Array;
      const [from, to] = [offset - start, Math.min(piece.byteLength, end - start)];
      // A piece copied whole is kept as it is: a view made of each would cost most of a long chain's rebuild.
      const slice = from === 0 && to === piece.byteLength ? piece : piece.subarray(from, to);
      if (slice.byteLength > 0) out.push(slice);
      offset += slice.byteLength;
    }
  }
  return out;
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
