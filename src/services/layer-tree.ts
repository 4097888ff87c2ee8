import { BadRequest } from '../errors.js';
import { type LayerTree, type LayerTreeRequest, type TreeRequestNode } from '../qgis/layer-tree.js';
import { type ProjectRef } from '../storage/project-store.js';
import { checkText } from './names.js';
import { type ProjectRepository } from './repository.js';

/** Groups nest at most this deep: QGIS Desktop shows no more, and the tree is walked recursively. */
export const MAX_TREE_DEPTH = 32;

function checkNodes(nodes: readonly TreeRequestNode[], depth: number): void {
  if (depth > MAX_TREE_DEPTH) throw new BadRequest(`groups nest at most ${MAX_TREE_DEPTH} deep`);
  for (const node of nodes) {
    checkText('name', node.name);
    if (node.type === 'layer') continue;
    if (node.name.trim() === '') throw new BadRequest('a group name must not be blank');
    for (const field of ['title', 'short_name', 'abstract'] as const) {
      const value = node[field];
      if (value !== undefined) checkText(field, value);
    }
    checkNodes(node.children ?? [], depth + 1);
  }
}

/** A project's layer tree: its groups, where each layer sits in them, and the drawing order. */
export class LayerTreeService {
  constructor(private readonly repository: ProjectRepository) {}

  async tree(ref: ProjectRef): Promise<LayerTree> {
    return (await this.repository.read(ref)).layerTreeOf();
  }

  /** Replaces the tree; answers it as written (a mutually exclusive group shows one child at most). */
  async replace(ref: ProjectRef, request: LayerTreeRequest): Promise<LayerTree> {
    checkNodes(request.children, 1);
    return this.repository.update(ref, (document) => document.replaceLayerTree(request), [], 'changed the layer tree');
  }
}
