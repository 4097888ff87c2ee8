import { type LayerEntry } from '../qgis/project.js';
import { DeltaBase, type DeltaOp } from '../storage/content-delta.js';
import { contentBytes, projectKey, type ProjectRef, type ProjectStore } from '../storage/project-store.js';
import { type StyleChange } from '../storage/style-store.js';
import { encodeDelta, encodeKeyframe, encodeStyles } from '../storage/version-codec.js';
import { encodeLayers } from '../storage/version-layers.js';
import { type KeptVersion, RecentVersions } from './recent-versions.js';
import { writeOrigin } from './write-origin.js';

/** How many versions are kept, and for how many days (`STEWARD_HISTORY_VERSIONS`, `STEWARD_HISTORY_DAYS`). */
export interface HistorySettings {
  versions: number;
  days: number;
}

export const DEFAULT_HISTORY: HistorySettings = { versions: 1000, days: 90 };

/**
 * Deltas between keyframes (fewer when fewer versions are kept): a restore applies at most this many,
 * each costing its operations (a few for a write of one layer), and versions are pruned by chains.
 */
const KEYFRAME_EVERY = 100;
/** A chain whose deltas add up to this share of the content starts a new keyframe: deltas that large save little. */
const MAX_CHAIN_SHARE = 0.5;
/** Projects whose newest version this process keeps at hand; another's next version is a keyframe. */
const MAX_TIPS = 64;
/**
 * The content of the versions this process recorded lately kept at hand, counted whole: a restore
 * of one costs no rebuild (a dozen versions of a 5 MB project; versions mostly share their pieces).
 */
const MAX_KEPT_BYTES = 64 * 1024 * 1024;
/** Layers of those versions, counted over every version: a list costs a reference per layer. */
const MAX_KEPT_LAYERS = 500_000;

/** What this process knows of a project's newest version, for the next to be a delta against it. */
interface Tip {
  id: number;
  /** The project's identity as written in that version: a version of the same id made elsewhere has another. */
  identity: string;
  base: DeltaBase;
  /** Deltas since the keyframe, and their bytes. */
  chain: number;
  chainBytes: number;
  styles: Map<string, string>;
  /** Every layer of that version, when its write listed them. */
  layers: readonly LayerEntry[] | undefined;
}

/** Who made a version, through which route, and when (ISO 8601). */
interface Origin {
  who: string;
  route: string;
  time: string;
}

/** A write's version that could not be stored after the write: recorded at the project's next write. */
interface Owed {
  version: Recorded;
  origin: Origin;
}

/** Told of a version that could not be stored after its write, which stands all the same. */
export type OwedVersionListener = (ref: ProjectRef, error: unknown) => void;

/** A version to record: the project's content and identity once written, what it changed, and how it is told. */
export interface Recorded {
  pieces: readonly Uint8Array[];
  identity: string;
  summary: string;
  styles: readonly StyleChange[];
  /** The content was not made from the newest version's pieces (a restore, a project found changed): a delta would cost its size. */
  whole?: boolean;
  /** Every layer of the content (ProjectDocument.everyLayer), when the write knows them. */
  layers?: readonly LayerEntry[];
}

function now(): string {
  return new Date().toISOString();
}

function applyStyleChanges(styles: Map<string, string>, changes: readonly StyleChange[]): Map<string, string> {
  const next = new Map(styles);
  for (const { name, qml } of changes) {
    if (qml === undefined) next.delete(name);
    else next.set(name, qml);
  }
  return next;
}

/**
 * Records each write of a project as a version, holding the project's lock: a delta against the
 * version before (its content kept at hand, so the delta costs the pieces the write changed), a
 * keyframe every KEYFRAME_EVERY versions or when this process does not hold the version before.
 */
export class VersionRecorder {
  private readonly tips = new Map<string, Tip>();
  /** Versions of writes that could not be stored, by project: the project's next write records them. */
  private readonly owed = new Map<string, Owed>();
  private readonly recent = new RecentVersions(MAX_KEPT_BYTES, MAX_KEPT_LAYERS);

  constructor(
    private readonly store: ProjectStore,
    private readonly settings: HistorySettings = DEFAULT_HISTORY,
    private readonly onOwed: OwedVersionListener = () => undefined,
  ) {}

  /**
   * Before a change, under the lock: records the project as stored (`content`, of `identity`) when
   * its newest version is not it (a project without versions yet, or one changed outside Steward),
   * so that it can be restored. When it is the write whose version could not be stored, that
   * version is recorded as it was told; throws when it cannot be now either, before the change.
   */
  async baseline(
    ref: ProjectRef,
    identity: string | undefined,
    content: () => Promise<Uint8Array | undefined>,
  ): Promise<void> {
    const key = projectKey(ref);
    const owed = this.owed.get(key);
    this.owed.delete(key);
    if (identity === undefined) return;
    const latest = await this.store.versions.latest(ref);
    if (latest?.identity === identity) return;
    if (owed?.version.identity === identity) {
      await this.append(ref, owed.version, owed.origin).catch((error: unknown) => {
        this.owed.set(key, owed);
        throw error;
      });
      return;
    }
    const stored = await content();
    if (!stored) return;
    const summary = latest ? 'changed outside Steward' : 'as it was before its first recorded change';
    await this.append(
      ref,
      { pieces: [stored], identity, summary, styles: [], whole: true },
      { who: 'steward', route: '', time: now() },
    );
  }

  /**
   * After a write, under the lock: records the version it made. The write stands whatever happens
   * here: a version that cannot be stored is kept to be recorded at the project's next write, and
   * `onOwed` told.
   */
  async record(ref: ProjectRef, version: Recorded): Promise<void> {
    const origin = { ...writeOrigin(), time: now() };
    try {
      await this.append(ref, version, origin);
    } catch (error) {
      this.owed.set(projectKey(ref), { version, origin });
      this.onOwed(ref, error);
    }
  }

  /**
   * While a write is under way, under the lock: makes the delta of its content against the newest
   * version this process keeps, which `record` then finds made (a large delta costs milliseconds,
   * the write of a large project as many, and the event loop waits for the disk meanwhile).
   */
  prepare(ref: ProjectRef, version: Pick<Recorded, 'pieces' | 'whole'>): void {
    const tip = this.tips.get(projectKey(ref));
    try {
      const ops = tip && this.deltaOf(tip, version);
      if (ops) encodeDelta(ops);
    } catch {
      // The write goes on whatever happens here: `record` makes the delta again, and tells a failure.
    }
  }

  /** The operations of `version` against `tip` when it is to be stored as a delta of it. */
  private deltaOf(tip: Tip, version: Pick<Recorded, 'pieces' | 'whole'>): readonly DeltaOp[] | undefined {
    const chained = !version.whole && tip.chain < Math.min(KEYFRAME_EVERY, this.settings.versions);
    return chained ? tip.base.delta(version.pieces) : undefined;
  }

  private async append(ref: ProjectRef, version: Recorded, origin: Origin): Promise<void> {
    const key = projectKey(ref);
    const latest = await this.store.versions.latest(ref);
    const kept = this.tips.get(key);
    const tip = kept && latest?.id === kept.id && latest.identity === kept.identity ? kept : undefined;
    this.tips.delete(key);
    const styles = tip ? applyStyleChanges(tip.styles, version.styles) : await this.storedStyles(ref);
    const size = contentBytes(version.pieces);
    const ops = tip && this.deltaOf(tip, version);
    const delta = ops && encodeDelta(ops);
    const keyframe = !tip || !delta || tip.chainBytes + delta.byteLength > size * MAX_CHAIN_SHARE;
    const [payload, layers] = await Promise.all([
      keyframe ? encodeKeyframe(version.pieces) : delta,
      version.layers && encodeLayers(version.layers, keyframe ? undefined : tip.layers),
    ]);
    const id = await this.store.versions.append(ref, {
      time: origin.time,
      who: origin.who,
      route: origin.route,
      summary: version.summary,
      identity: version.identity,
      keyframe,
      payload,
      styles: keyframe || version.styles.length > 0 ? encodeStyles(styles) : undefined,
      layers,
    });
    const chain = keyframe ? 0 : tip.chain + 1;
    const chainBytes = keyframe ? 0 : tip.chainBytes + payload.byteLength;
    this.keepTip(key, {
      id,
      identity: version.identity,
      base: DeltaBase.of(version.pieces),
      chain,
      chainBytes,
      styles,
      layers: version.layers,
    });
    this.recent.keep(ref, id, version.identity, { pieces: version.pieces, layers: version.layers });
    if (keyframe) await this.prune(ref);
  }

  /**
   * Version `id` of the project, of `identity`, as the write that made it knew it: undefined unless
   * this process recorded it lately (a restore then rebuilds it from its chain).
   */
  kept(ref: ProjectRef, id: number, identity: string): KeptVersion | undefined {
    return this.recent.get(ref, id, identity);
  }

  private keepTip(key: string, tip: Tip): void {
    this.tips.set(key, tip);
    const oldest = this.tips.keys().next().value;
    if (this.tips.size > MAX_TIPS && oldest !== undefined) this.tips.delete(oldest);
  }

  /** The project's styles as its store holds them. */
  private async storedStyles(ref: ProjectRef): Promise<Map<string, string>> {
    const styles = new Map<string, string>();
    for (const name of await this.store.styles.names(ref)) {
      const qml = await this.store.styles.read(ref, name);
      if (qml !== undefined) styles.set(name, qml);
    }
    return styles;
  }

  /** Removes versions beyond the retention: whole chains, so it is done when a new one starts. */
  private async prune(ref: ProjectRef): Promise<void> {
    const since = new Date(Date.now() - this.settings.days * 24 * 3600 * 1000);
    await this.store.versions.prune(ref, { versions: this.settings.versions, since });
  }

  /** Forgets what this process kept of the project's versions (it was removed). */
  forget(ref: ProjectRef): void {
    this.tips.delete(projectKey(ref));
    this.owed.delete(projectKey(ref));
    this.recent.forget(ref);
  }
}
