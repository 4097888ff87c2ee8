/**
 * A project's layers and its layer tree, read together (neither waits for the other), and the
 * layers in the order the map draws them.
 */
import { useEffect, useState } from 'preact/hooks';

import { api } from '../api/client';
import { type LayerInfo, loadLayers } from '../api/layers';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { readAhead, readOnce } from '../api/read-ahead';
import { layersTopFirst, type LayerTree } from '../api/tree-edits';
import { useApi } from './use-api';

/** The layers bottom first, as the map draws them: the project's drawing order, else its tree's. */
function drawingOrder(layers: LayerInfo[], tree: LayerTree | undefined): LayerInfo[] {
  if (!tree) return layers;
  const topFirst = tree.order ?? layersTopFirst(tree.children);
  const rank = (name: string): number => {
    const index = topFirst.indexOf(name);
    return index === -1 ? -1 : topFirst.length - index;
  };
  return [...layers].sort((a, b) => rank(a.name) - rank(b.name));
}

function readTree(ref: ProjectRef, signal?: AbortSignal): Promise<LayerTree> {
  return api.get('/api/projects/{project}/tree', {
    path: { project: ref.project },
    query: schemaQuery(ref),
    ...(signal ? { signal } : {}),
  });
}

const keyOf = (what: string, ref: ProjectRef): string => `${what}\n${ref.project}\n${ref.schema ?? ''}`;

/** Starts reading the project's layers and tree before its page is loaded (routes.ts). */
export function readProjectAhead(ref: ProjectRef): void {
  readAhead(keyOf('layers', ref), () => loadLayers(ref));
  readAhead(keyOf('tree', ref), () => readTree(ref));
}

export function useProjectLayers(ref: ProjectRef) {
  const layers = useApi(
    (signal) => readOnce(keyOf('layers', ref), () => loadLayers(ref, signal)),
    [ref.project, ref.schema],
  );
  const loadedTree = useApi(
    (signal) => readOnce(keyOf('tree', ref), () => readTree(ref, signal)),
    [ref.project, ref.schema],
  );
  // The tree as the API last answered a change of it, until it is read again.
  const [saved, setSaved] = useState<LayerTree | undefined>(undefined);
  useEffect(() => setSaved(undefined), [loadedTree.data]);
  const tree = saved ?? loadedTree.data;
  return {
    layers,
    /** The layers bottom first (in project order while the tree is not read, or if it fails). */
    drawn: drawingOrder(layers.data ?? [], tree),
    tree: { current: tree, saved: setSaved, error: loadedTree.error },
    /** Whether the drawing order is known: the tree was read, or failed to be. */
    ordered: tree !== undefined || loadedTree.error !== undefined,
    /** Reads both again, as after a layer is added, changed or removed. */
    reload: (): void => {
      layers.reload();
      loadedTree.reload();
    },
  };
}
