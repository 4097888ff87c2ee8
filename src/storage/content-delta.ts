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

/**
 * Whether `length` bytes of `a` from `aStart` and of `b` from `bStart` are the same, compared in
 * place: views made for each of a delta's many comparisons would cost more than them.
 */
function equalAt(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  const buffer = Buffer.isBuffer(a) ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return buffer.compare(b, bStart, bStart + length, aStart, aStart + length) === 0;
}

/**
 * Runs this short are compared byte by byte: most comparisons of a delta part within a line's first
 * bytes, where a call to compare costs more than the bytes do.
 */
const SCANNED = 64;

/** Where `a` from `aStart` and `b` from `bStart` first differ, as bytes past their starts, looked at up to `end` of them. */
function scanShared(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, from: number, end: number): number {
  let at = from;
  while (at < end && a[aStart + at] === b[bStart + at]) at++;
  return at;
}

/**
 * How many bytes `a` from `aStart` and `b` from `bStart` share. The first bytes are compared one by
 * one, then runs of doubling length until one differs, which is halved down to a short one: the
 * cost follows the shared length, not the inputs' size.
 */
function sharedLength(a: Uint8Array, b: Uint8Array, aStart = 0, bStart = 0): number {
  const limit = Math.min(a.byteLength - aStart, b.byteLength - bStart);
  let low = scanShared(a, aStart, b, bStart, 0, Math.min(limit, SCANNED));
  if (low < SCANNED) return low;
  let high = limit;
  for (let step = SCANNED; low < limit; step *= 2) {
    const end = Math.min(limit, low + step);
    if (!equalAt(a, aStart + low, b, bStart + low, end - low)) {
      high = end - 1;
      break;
    }
    low = end;
  }
  while (high - low > SCANNED) {
    const middle = Math.ceil((low + high) / 2);
    if (equalAt(a, aStart + low, b, bStart + low, middle - low)) low = middle;
    else high = middle - 1;
  }
  return scanShared(a, aStart, b, bStart, low, high);
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
/**
 * A spanning piece may look for lines once more per this many of its bytes: a whole file differs
 * from its base in places, each of whose lines may cost a search, and a file that ran out of
 * searches would be taken as new from there on.
 */
const SPANNING_BYTES_PER_PROBE = 4 * 1024;
/** The base's bytes a spanning piece looks for further on in itself, to find where bytes inserted there end. */
const ANCHOR = 64;
/**
 * How far a spanning piece's line is looked for in the base either way, and the base's bytes
 * further on in the piece: a few records removed, moved or inserted in one place.
 */
const SPANNING_WINDOW = 64 * 1024;
/**
 * How far on in a spanning piece the base's bytes are looked for at first, and how much further
 * for each byte of it taken as new since the two parted: a record changed is a few lines taken as
 * new, not the records up to where its base's bytes come again by chance.
 */
const INSERTED_REACH = 4 * 1024;
const INSERTED_GROWTH = 8;
/** Twice as far before: a record moved up from further on takes the base there, which then goes on where it was left. */
const SPANNING_BACK = 2 * SPANNING_WINDOW;
/**
 * Bytes that must agree from where a spanning piece's line or the base's bytes are found for the
 * two to go on together there: a line that many records share is found in each of them.
 */
const RESYNC = 1024;
/** The places a spanning piece's line or the base's bytes are found at that are checked, each way: a line of many records is at many. */
const RESYNC_CANDIDATES = 8;

/** The places a search may look at, and which it takes. */
interface Candidates {
  left: number;
  /** Whether to take byte `at` of the haystack, base piece `piece` when it is one. */
  accept(at: number, piece: number): boolean;
}

/** Where `needle` is in `haystack` within `room` bytes of `from` (the first place `candidates` take), or -1. */
function searchWindow(
  haystack: Uint8Array,
  needle: Uint8Array,
  from: number,
  room: number,
  candidates?: Candidates,
  piece = 0,
): number {
  const window = haystack.subarray(from, from + room);
  const view = Buffer.from(window.buffer, window.byteOffset, window.byteLength);
  for (let found = view.indexOf(needle); found >= 0; found = view.indexOf(needle, found + 1)) {
    if (!candidates) return from + found;
    if (candidates.left-- <= 0) break;
    if (candidates.accept(from + found, piece)) return from + found;
  }
  return -1;
}

/** Where a spanning piece and its base last parted (DeltaBase.differences). */
interface Parted {
  /** The base piece and byte. */
  at: [number, number];
  /** The piece's bytes taken as new since. */
  taken: number;
  /** Whether the base was taken elsewhere since: a record found out of its place. */
  elsewhere: boolean;
}

/** Where a spanning piece goes on with the base (DeltaBase.realign). */
interface Realigned {
  /** Bytes of the piece that come first, new. */
  skip: number;
  /** The base piece and byte it goes on at. */
  at: [number, number];
  /** Whether that is where the two parted, or after it: they are together again. */
  rejoined: boolean;
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
/** Bytes of a piece cut across base pieces' memory that may lie beside it and be taken as new (DeltaBase.acrossMemory). */
const MAX_BESIDE = 1024;

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

/** Collects operations, joining copies of adjacent runs and new bytes that follow one another. */
class DeltaBuilder {
  private readonly ops: DeltaOp[] = [];
  probesLeft = MAX_PROBES;
  /**
   * Where each line was looked for and what was found, by its bytes and the place: while lines are
   * new the base's place stays, and the lines records share (a thousand re-indented) are the same.
   */
  readonly searched = new Map<string, [number, number] | undefined>();
  /**
   * The new bytes taken last, not yet an operation, as where they lie in memory: the next line of
   * a changed piece follows them there and extends them without a view made for each line.
   */
  private pendingMemory: ArrayBufferLike | undefined;
  private pendingStart = 0;
  private pendingEnd = 0;

  copy(offset: number, length: number): void {
    if (length === 0) return;
    this.endBytes();
    const last = this.ops.at(-1);
    if (last?.kind === 'copy' && last.offset + last.length === offset) last.length += length;
    else this.ops.push({ kind: 'copy', offset, length });
  }

  /** The bytes of `source` from `start` to `end` as new; those that follow the last ones in memory extend them. */
  bytes(source: Uint8Array, start = 0, end = source.byteLength): void {
    if (end === start) return;
    const memoryStart = source.byteOffset + start;
    if (this.pendingMemory === source.buffer && this.pendingEnd === memoryStart) {
      this.pendingEnd = source.byteOffset + end;
      return;
    }
    this.endBytes();
    this.pendingMemory = source.buffer;
    this.pendingStart = memoryStart;
    this.pendingEnd = source.byteOffset + end;
  }

  /** The operations collected. */
  finish(): DeltaOp[] {
    this.endBytes();
    return this.ops;
  }

  private endBytes(): void {
    if (this.pendingMemory === undefined) return;
    const bytes = Buffer.from(this.pendingMemory, this.pendingStart, this.pendingEnd - this.pendingStart);
    this.ops.push({ kind: 'bytes', bytes });
    this.pendingMemory = undefined;
  }
}

/** Where byte NEWLINE first is in `bytes` from `from` on, or -1. */
function newlineFrom(bytes: Uint8Array, from: number): number {
  return Uint8Array.prototype.indexOf.call(bytes, NEWLINE, from);
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
      if (bytes.byteLength >= MIN_SHARED_MEMORY) this.rememberMemory(bytes.buffer, index);
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
        const across = this.acrossMemory(piece, builder);
        if (across !== undefined) {
          next = across;
          continue;
        }
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
    return builder.finish();
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

  /**
   * A large `piece` cut across the memory of base pieces (a run of records that followed one
   * another in a write before the last, and a few bytes beside them): the runs each base piece
   * holds copied from it, the bytes between new. Answers the base piece expected next; undefined,
   * with nothing taken, when more than MAX_BESIDE bytes of it lie in no base piece's memory.
   */
  private acrossMemory(piece: Uint8Array, builder: DeltaBuilder): number | undefined {
    const candidates = piece.byteLength >= MIN_SHARED_MEMORY ? this.indexesByMemory.get(piece.buffer) : undefined;
    if (!candidates) return undefined;
    const start = piece.byteOffset;
    const end = start + piece.byteLength;
    /** Base pieces in the order of their memory, each with where it starts to hold the piece. */
    const runs: Array<{ index: number; from: number; until: number }> = [];
    let at = start;
    let beside = 0;
    for (const index of candidates) {
      const bytes = (this.pieces[index] as BasePiece).bytes;
      if (bytes.byteOffset >= end) break;
      const until = Math.min(end, bytes.byteOffset + bytes.byteLength);
      if (until <= at) continue;
      beside += Math.max(0, bytes.byteOffset - at);
      runs.push({ index, from: Math.max(at, bytes.byteOffset), until });
      at = until;
    }
    beside += end - at;
    if (runs.length === 0 || beside > MAX_BESIDE) return undefined;
    let done = start;
    for (const { index, from, until } of runs) {
      const base = this.pieces[index] as BasePiece;
      builder.bytes(piece, done - start, from - start);
      builder.copy(base.offset + from - base.bytes.byteOffset, until - from);
      done = until;
    }
    builder.bytes(piece, done - start, end - start);
    const last = runs.at(-1) as { index: number; until: number };
    const lastBytes = (this.pieces[last.index] as BasePiece).bytes;
    return last.until === lastBytes.byteOffset + lastBytes.byteLength ? last.index + 1 : last.index;
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
    if (spanning) builder.probesLeft += Math.floor(piece.byteLength / SPANNING_BYTES_PER_PROBE);
    let index = start;
    let from = 0;
    /** How far `piece` is done. */
    let at = 0;
    /** Where the base was when the two last parted, and the bytes of the piece left then. */
    let parted: Parted | undefined;
    while (at < piece.byteLength) {
      const base = this.pieces[index] as BasePiece;
      if (spanning && from === base.bytes.byteLength && index + 1 < this.pieces.length) {
        index += 1;
        from = 0;
        continue;
      }
      const shared = sharedLength(piece, base.bytes, at, from);
      // A run to the end of its base piece may go on in the next one: copied however short.
      if (shared >= MIN_COPY || (spanning && shared > 0 && from + shared === base.bytes.byteLength)) {
        builder.copy(base.offset + from, shared);
        at += shared;
        from += shared;
        // Together again, unless the base was taken elsewhere since they parted (a record like
        // another) and it has not gone on for long.
        if (shared >= SEARCH_WINDOW || (shared >= RESYNC && !parted?.elsewhere)) parted = undefined;
        continue;
      }
      const lineEnd = newlineFrom(piece, at) + 1 || piece.byteLength;
      // The line, and the next ones if it is short: a run long enough to copy.
      const probeEnd = Math.min(piece.byteLength, at + Math.max(lineEnd - at, MIN_COPY));
      const searched = probeEnd - at >= MIN_COPY && builder.probesLeft-- > 0;
      if (spanning) parted ??= { at: [index, from], taken: 0, elsewhere: false };
      const reach = INSERTED_REACH + INSERTED_GROWTH * (parted?.taken ?? 0);
      const probe = searched ? piece.subarray(at, probeEnd) : undefined;
      const realigned =
        probe && spanning ? this.realign(piece.subarray(at), probe, [index, from], parted, reach) : undefined;
      const found = probe && !spanning ? this.searchOnce(probe, index, from, builder) : realigned?.at;
      if (found) {
        const skip = realigned?.skip ?? 0;
        builder.bytes(piece, at, at + skip);
        at += skip;
        if (realigned?.rejoined) parted = undefined;
        else if (parted) parted.elsewhere = true;
        [index, from] = found;
        continue;
      }
      builder.bytes(piece, at, lineEnd);
      if (parted) parted.taken += lineEnd - at;
      at = lineEnd;
    }
    return from === (this.pieces[index] as BasePiece).bytes.byteLength ? index + 1 : index;
  }

  /**
   * Where `probe` is within SEARCH_WINDOW bytes of base piece `index` from byte `from` on, else
   * within LOOK_BACK bytes before it, as a piece and a byte of it.
   */
  private searchOnce(
    probe: Uint8Array,
    index: number,
    from: number,
    builder: DeltaBuilder,
  ): [number, number] | undefined {
    const key = `${index} ${from} ${Buffer.from(probe.buffer, probe.byteOffset, probe.byteLength).toString('latin1')}`;
    if (builder.searched.has(key)) return builder.searched.get(key);
    const found = this.search(probe, index, from);
    builder.searched.set(key, found);
    return found;
  }

  private search(probe: Uint8Array, index: number, from: number): [number, number] | undefined {
    const bytes = (this.pieces[index] as BasePiece).bytes;
    const found = searchWindow(bytes, probe, from, SEARCH_WINDOW);
    if (found >= 0) return [index, found];
    const behind = Math.max(0, from - LOOK_BACK);
    const back = searchWindow(bytes, probe, behind, from - behind);
    return back < 0 ? undefined : [index, back];
  }

  /**
   * Where a spanning piece's `rest`, parted from the base at byte `from` of base piece `index`,
   * goes on with the base, RESYNC bytes agreeing: its line `probe` found a little after where the
   * two parted when the base was taken elsewhere since (after a record moved), further on in the
   * base (a record removed) or before (a record moved), else the base's bytes here or where they
   * parted found within `reach` bytes of `rest`, the nearer (a record inserted).
   */
  private realign(
    rest: Uint8Array,
    probe: Uint8Array,
    [index, from]: [number, number],
    parted: Parted | undefined,
    reach: number,
  ): Realigned | undefined {
    const accept = (start: number, at: number) => this.agrees(rest, 0, at, start);
    const inBase = ([at, start]: [number, number], step: 1 | -1, window?: number) =>
      this.searchPieces(probe, at, start, step, { left: RESYNC_CANDIDATES, accept }, window);
    const rejoined = parted?.elsewhere && inBase(parted.at, 1, SEARCH_WINDOW);
    if (rejoined) return { skip: 0, at: rejoined, rejoined: true };
    const found = inBase([index, from], 1) ?? inBase([index, from], -1);
    if (found) return { skip: 0, at: found, rejoined: false };
    const here = this.inserted(rest, [index, from], reach);
    const there = parted ? this.inserted(rest, parted.at, reach) : undefined;
    return here && there ? (there.skip < here.skip ? there : here) : (here ?? there);
  }

  /** Where the base's bytes from `at` come again within `reach` bytes of `rest`, RESYNC bytes agreeing. */
  private inserted(rest: Uint8Array, at: [number, number], reach: number): Realigned | undefined {
    const [index, from] = at;
    const anchor = (this.pieces[index] as BasePiece).bytes.subarray(from, from + ANCHOR);
    const skip =
      anchor.byteLength >= MIN_COPY
        ? searchWindow(rest, anchor, 1, Math.min(reach, SPANNING_WINDOW), {
            left: RESYNC_CANDIDATES,
            accept: (offset) => this.agrees(rest, offset, index, from),
          })
        : -1;
    return skip > 0 ? { skip, at, rejoined: true } : undefined;
  }

  /**
   * Where `probe` is within SPANNING_WINDOW bytes of the base after (`step` 1) or SPANNING_BACK before (-1) byte
   * `from` of base piece `index`, across pieces, at the first place `accept` takes.
   */
  private searchPieces(
    probe: Uint8Array,
    index: number,
    from: number,
    step: 1 | -1,
    candidates: Candidates,
    window = step > 0 ? SPANNING_WINDOW : SPANNING_BACK,
  ): [number, number] | undefined {
    let room = window;
    for (let at = index; at >= 0 && at < this.pieces.length && room > 0; at += step) {
      const bytes = (this.pieces[at] as BasePiece).bytes;
      const [start, end] = at !== index ? [0, bytes.byteLength] : step > 0 ? [from, bytes.byteLength] : [0, from];
      const [low, high] = step > 0 ? [start, Math.min(end, start + room)] : [Math.max(start, end - room), end];
      const found = searchWindow(bytes, probe, low, high - low, candidates, at);
      if (found >= 0) return [at, found];
      room -= high - low;
    }
    return undefined;
  }

  /** Whether `bytes` from byte `offset` on and the base from byte `from` of piece `index` on agree for RESYNC bytes (or to the end of `bytes`). */
  private agrees(bytes: Uint8Array, offset: number, index: number, from: number): boolean {
    const length = Math.min(RESYNC, bytes.byteLength - offset);
    const base = (this.pieces[index] as BasePiece).bytes;
    // Within one base piece, one comparison in place: most places a line is found at part at once.
    if (from + length <= base.byteLength) return equalAt(bytes, offset, base, from, length);
    return this.sharedFrom(bytes.subarray(offset), index, from, length) >= length;
  }

  /** How many of the first `limit` bytes of `bytes` the base holds from byte `from` of piece `index` on, across pieces. */
  private sharedFrom(bytes: Uint8Array, index: number, from: number, limit: number): number {
    let shared = 0;
    for (let at = index, start = from; at < this.pieces.length && shared < limit; at++, start = 0) {
      const base = (this.pieces[at] as BasePiece).bytes.subarray(start);
      const run = sharedLength(bytes.subarray(shared, limit), base);
      shared += run;
      if (run < base.byteLength) break;
    }
    return shared;
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

/** What reads encoded operations: a copy's offset and length, or where new bytes lie in the encoding. */
interface OpReader {
  copy(offset: number, length: number): void;
  bytes(start: number, length: number): void;
}

/** Reads `count` operations encoded by `encodeOps` from byte `at` of `bytes`, in turn. */
function readOps(bytes: Buffer, at: number, count: number, reader: OpReader): void {
  for (let left = count; left > 0; left--) {
    if (bytes.readUInt8(at) === COPY) {
      reader.copy(bytes.readDoubleLE(at + 1), bytes.readDoubleLE(at + 9));
      at += COPY_FIELDS;
    } else {
      const length = bytes.readUInt32LE(at + 1);
      reader.bytes(at + BYTES_FIELDS, length);
      at += BYTES_FIELDS + length;
    }
  }
}

/** `count` operations encoded by `encodeOps` from byte `at` of `bytes`; new bytes are views of `bytes`. */
export function decodeOps(bytes: Buffer, at: number, count: number): DeltaOp[] {
  const ops: DeltaOp[] = [];
  readOps(bytes, at, count, {
    copy: (offset, length) => ops.push({ kind: 'copy', offset, length }),
    bytes: (start, length) => ops.push({ kind: 'bytes', bytes: bytes.subarray(start, start + length) }),
  });
  return ops;
}

/** The index of the run holding byte `offset`: the last whose start is at or before it. */
function runAt(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 2;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Runs of sources' bytes, by number: a source's index, where the run starts in it and its length, and where it starts in the content. */
interface Runs {
  source: number[];
  start: number[];
  length: number[];
  /** One more than the runs: the last is the content's size. */
  at: number[];
}

function noRuns(): Runs {
  return { source: [], start: [], length: [], at: [0] };
}

/**
 * Content made of runs of sources' bytes (a base, then the new bytes of each delta applied), held
 * as numbers: a delta applied costs its operations and the runs its copies cross, and makes no view
 * of any piece (views made by the thousand for each delta of a long chain cost most of its rebuild
 * in allocation and garbage collection). The content is copied once, when joined.
 */
export class ContentRuns {
  private readonly sources: Buffer[] = [];
  private runs = noRuns();

  constructor(base: Buffer) {
    this.sources.push(base);
    this.push(this.runs, 0, 0, base.byteLength);
  }

  get size(): number {
    return this.runs.at.at(-1) as number;
  }

  /** Adds a run, joined to the last when it goes on from it in the same source. */
  private push(runs: Runs, source: number, start: number, length: number): void {
    if (length === 0) return;
    const last = runs.source.length - 1;
    const end = (runs.at.at(-1) as number) + length;
    if (
      last >= 0 &&
      runs.source[last] === source &&
      (runs.start[last] as number) + (runs.length[last] as number) === start
    ) {
      runs.length[last] = (runs.length[last] as number) + length;
      runs.at[last + 1] = end;
      return;
    }
    runs.source.push(source);
    runs.start.push(start);
    runs.length.push(length);
    runs.at.push(end);
  }

  /**
   * Applies the `count` operations `encodeOps` encoded from byte `at` of `bytes`, which the content
   * then holds runs of. Throws when a run lies outside the content.
   */
  apply(bytes: Buffer, at: number, count: number): void {
    const source = this.sources.push(bytes) - 1;
    const base = this.runs;
    const size = this.size;
    const runs = noRuns();
    readOps(bytes, at, count, {
      copy: (offset, length) => {
        if (offset + length > size) throw new Error('a delta copies bytes its base does not have');
        const end = offset + length;
        for (let index = runAt(base.at, offset); offset < end; index++) {
          const from = offset - (base.at[index] as number);
          const taken = Math.min((base.length[index] as number) - from, end - offset);
          this.push(runs, base.source[index] as number, (base.start[index] as number) + from, taken);
          offset += taken;
        }
      },
      bytes: (start, length) => this.push(runs, source, start, length),
    });
    this.runs = runs;
  }

  /** The content, copied into one buffer. */
  join(): Buffer {
    const { source, start, length, at } = this.runs;
    const content = Buffer.allocUnsafeSlow(this.size);
    for (let index = 0; index < source.length; index++) {
      const from = start[index] as number;
      (this.sources[source[index] as number] as Buffer).copy(
        content,
        at[index],
        from,
        from + (length[index] as number),
      );
    }
    return content;
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
