import { type LayerEntry } from '../qgis/project.js';
import { projectKey, type ProjectRef } from '../storage/project-store.js';

/** A version as the write that made it knew it: its content's pieces, and every layer when known. */
export interface KeptVersion {
  pieces?: readonly Uint8Array[];
  layers?: readonly LayerEntry[];
}

interface Entry extends KeptVersion {
  /** The project's identity as the version wrote it: a version of the same id made elsewhere has another. */
  identity: string;
}

function versionKey(ref: ProjectRef, id: number): string {
  return `${projectKey(ref)}\u0000${id}`;
}

/** The memory `pieces` lie in, each once (consecutive pieces mostly lie in the same). */
function memoryOf(pieces: readonly Uint8Array[]): Set<ArrayBufferLike> {
  const memory = new Set<ArrayBufferLike>();
  let last: ArrayBufferLike | undefined;
  for (const piece of pieces) {
    if (piece.buffer !== last) memory.add(piece.buffer);
    last = piece.buffer;
  }
  return memory;
}

/**
 * The versions this process recorded lately, as their writes knew them: a restore of one then
 * neither rebuilds it from its chain nor reads its layers out of its file. Bounded by the memory
 * their pieces lie in, each block counted once (versions mostly share their pieces' memory with the
 * version before), and by the layers listed (a reference each); the oldest go first, their
 * content before their layers.
 */
export class RecentVersions {
  private readonly entries = new Map<string, Entry>();
  /** How many kept versions hold pieces in each block of memory. */
  private readonly holders = new Map<ArrayBufferLike, number>();
  private bytes = 0;
  private layers = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxLayers: number,
  ) {}

  keep(ref: ProjectRef, id: number, identity: string, version: KeptVersion): void {
    const key = versionKey(ref, id);
    this.drop(key);
    const entry = { ...version, identity };
    this.entries.set(key, entry);
    this.hold(entry.pieces, 1);
    this.layers += entry.layers?.length ?? 0;
    for (const [oldest, kept] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      if (kept.layers) this.release(kept);
      else this.drop(oldest);
    }
    for (const oldest of this.entries.keys()) {
      if (this.layers <= this.maxLayers) break;
      this.drop(oldest);
    }
  }

  /** Version `id` of the project as kept, when it is the one of `identity`. */
  get(ref: ProjectRef, id: number, identity: string): KeptVersion | undefined {
    const kept = this.entries.get(versionKey(ref, id));
    return kept?.identity === identity ? kept : undefined;
  }

  /** Forgets the project's versions (it was removed). */
  forget(ref: ProjectRef): void {
    const prefix = `${projectKey(ref)}\u0000`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.drop(key);
  }

  private drop(key: string): void {
    const kept = this.entries.get(key);
    if (!kept) return;
    this.entries.delete(key);
    this.release(kept);
    this.layers -= kept.layers?.length ?? 0;
  }

  /** Lets go of a kept version's content, keeping its layers. */
  private release(kept: Entry): void {
    this.hold(kept.pieces, -1);
    delete kept.pieces;
  }

  /** Counts the memory of `pieces` as held by one version more (1) or less (-1). */
  private hold(pieces: readonly Uint8Array[] | undefined, change: 1 | -1): void {
    for (const memory of memoryOf(pieces ?? [])) {
      const holders = (this.holders.get(memory) ?? 0) + change;
      if (holders === 0) this.holders.delete(memory);
      else this.holders.set(memory, holders);
      if (holders === (change === 1 ? 1 : 0)) this.bytes += change * memory.byteLength;
    }
  }
}
