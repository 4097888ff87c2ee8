/**
 * Which layers a project's map shows: those its layer tree shows by default, until a layer is
 * checked or unchecked on the page; a change of the tree's visibility starts from the tree again.
 */
import { useState } from 'preact/hooks';

import { hiddenLayers, type LayerTree } from '../api/tree-edits';

export interface LayerVisibility {
  /** The layers not drawn. */
  hidden: ReadonlySet<string>;
  /** Whether the tree was read (or failed to be): until then, the map draws nothing. */
  known: boolean;
  show: (layer: string, visible: boolean) => void;
}

export function useLayerVisibility(tree: LayerTree | undefined, failed: boolean): LayerVisibility {
  const byTree = tree ? hiddenLayers(tree.children) : [];
  const key = byTree.join('\n');
  const [chosen, setChosen] = useState<{ key: string; hidden: ReadonlySet<string> } | undefined>(undefined);
  const hidden = chosen?.key === key ? chosen.hidden : new Set(byTree);
  const show = (layer: string, visible: boolean): void => {
    const next = new Set(hidden);
    if (visible) next.delete(layer);
    else next.add(layer);
    setChosen({ key, hidden: next });
  };
  return { hidden, known: tree !== undefined || failed, show };
}
