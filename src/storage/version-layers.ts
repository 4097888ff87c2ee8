/**
 * The layers a version keeps beside its content (docs/history.md): a restore of a version rebuilt
 * from its chain checks them rather than read every `<maplayer>` out of the rebuilt file. A version
 * keeps every layer when it is a keyframe or the version before kept none, else the layers that
 * differ from the version before's and the names of those gone: a write of one layer adds one.
 */
import { isDeepStrictEqual, promisify } from 'node:util';
import { constants, deflate, deflateSync, inflateSync } from 'node:zlib';

import { type LayerEntry } from '../qgis/project.js';
import { MarkupMemo } from '../qgis/xml/markup-memo.js';
import { versionKey } from './version-codec.js';
import { type VersionContent } from './version-store.js';

const deflateAsync = promisify(deflate);
const LEVEL = { level: constants.Z_BEST_SPEED };

/** A layer as stored: an extent JSON cannot hold (NaN, infinite) is kept as text. */
type StoredLayer = Omit<LayerEntry, 'extent'> & { extent: ReadonlyArray<number | string> };

type LayerList<Layer> = { all: Layer[] } | { set: Layer[]; gone: string[] };

/** Keyframes' layers read lately, as the keyframes inflated (version-codec.ts): a chain's versions share them. */
const KEYFRAME_LAYERS = new MarkupMemo<LayerList<LayerEntry> | undefined>(4);

function stored(layer: LayerEntry): StoredLayer {
  return layer.extent.every(Number.isFinite) ? layer : { ...layer, extent: layer.extent.map(String) };
}

function entry(layer: StoredLayer): LayerEntry {
  if (layer.extent.every((value) => typeof value === 'number')) return layer as LayerEntry;
  const [xmin, ymin, xmax, ymax] = layer.extent.map(Number) as [number, number, number, number];
  return { ...layer, extent: [xmin, ymin, xmax, ymax] };
}

/**
 * What changed from `before` to `layers`, by layer name (the layers a write lists have names of
 * their own). Mostly the same entries in the same order (a document keeps those of the layers a
 * write left alone): only what lies between their common start and end is compared by name.
 */
function changes(before: readonly LayerEntry[], layers: readonly LayerEntry[]): LayerList<StoredLayer> {
  let start = 0;
  while (start < before.length && start < layers.length && before[start] === layers[start]) start++;
  let [beforeEnd, end] = [before.length, layers.length];
  while (beforeEnd > start && end > start && before[beforeEnd - 1] === layers[end - 1])
    [beforeEnd, end] = [beforeEnd - 1, end - 1];
  const left = new Map(before.slice(start, beforeEnd).map((layer) => [layer.name, layer]));
  const set: StoredLayer[] = [];
  for (const layer of layers.slice(start, end)) {
    const old = left.get(layer.name);
    // Another entry equal to the old one: a list read again (a version restored).
    if (old !== layer && !isDeepStrictEqual(old, layer)) set.push(stored(layer));
    left.delete(layer.name);
  }
  return { set, gone: [...left.keys()] };
}

/**
 * `layers` as a version keeps them: what changed since `before` (the version before's) when given,
 * a few bytes deflated at once; else every one, deflated off the event loop.
 */
export async function encodeLayers(layers: readonly LayerEntry[], before?: readonly LayerEntry[]): Promise<Buffer> {
  if (before) return deflateSync(JSON.stringify(changes(before, layers)), LEVEL);
  return deflateAsync(JSON.stringify({ all: layers.map(stored) }), LEVEL);
}

/** A version's layers as stored, read. */
function decodeLayers(bytes: Buffer): LayerList<LayerEntry> {
  const list = JSON.parse(inflateSync(bytes).toString('utf8')) as LayerList<StoredLayer>;
  return 'all' in list ? { all: list.all.map(entry) } : { set: list.set.map(entry), gone: list.gone };
}

/**
 * The layers of the last version of `chain`, of the project `project` names, from the last
 * version that kept every layer on; undefined when a version since kept none (one stored before
 * versions kept layers, or whose write did not list them).
 */
export function decodeChainLayers(project: string, chain: readonly VersionContent[]): LayerEntry[] | undefined {
  let layers: Map<string, LayerEntry> | undefined;
  for (const version of chain) {
    const bytes = version.layers;
    const read = () => bytes && decodeLayers(bytes);
    const list = version.keyframe ? KEYFRAME_LAYERS.byKey(versionKey(project, version), read) : read();
    if (!list) layers = undefined;
    else if ('all' in list) layers = new Map(list.all.map((layer) => [layer.name, layer]));
    else if (layers) {
      for (const name of list.gone) layers.delete(name);
      for (const layer of list.set) layers.set(layer.name, layer);
    }
  }
  return layers && [...layers.values()];
}
