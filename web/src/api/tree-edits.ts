/**
 * Changes to a project's layer tree as the tree panel makes them, before it is sent whole with
 * `PUT /api/projects/{project}/tree`. A node is addressed by its path: the index of each node from
 * the top, children top first. Every function returns a new tree and leaves its argument alone.
 */
import type { Answer } from './client';

export type LayerTree = Answer<'/api/projects/{project}/tree'>;
export type TreeNode = LayerTree['children'][number];
export type TreeGroup = Extract<TreeNode, { type: 'group' }>;
export type Path = number[];

const copy = (nodes: TreeNode[]): TreeNode[] => structuredClone(nodes);

/** The list of siblings the node at `path` is in: the top level or a group's children. */
function siblingsOf(nodes: TreeNode[], path: Path): TreeNode[] {
  let list = nodes;
  for (const index of path.slice(0, -1)) {
    const node = list[index];
    if (node?.type !== 'group') throw new Error(`no group at ${path.join('.')}`);
    list = node.children;
  }
  return list;
}

export function nodeAt(nodes: TreeNode[], path: Path): TreeNode | undefined {
  return siblingsOf(nodes, path)[path[path.length - 1] ?? -1];
}

/** Whether `inner` is `outer` or lies inside it. */
export function within(inner: Path, outer: Path): boolean {
  return outer.length <= inner.length && outer.every((index, at) => inner[at] === index);
}

/** The node at `from` taken out and put before the node at `before` (a path in the tree as it was). */
export function moveBefore(nodes: TreeNode[], from: Path, before: Path): TreeNode[] {
  if (within(before, from)) return nodes;
  const next = copy(nodes);
  const source = siblingsOf(next, from);
  const [node] = source.splice(from[from.length - 1] ?? 0, 1);
  if (!node) return nodes;
  // Taking the node out shifts the later siblings of its list, the target's ancestors among them.
  const target = before.map((index, depth) =>
    depth === from.length - 1 && within(from.slice(0, -1), before.slice(0, depth)) && index > (from[depth] ?? 0)
      ? index - 1
      : index,
  );
  siblingsOf(next, target).splice(target[target.length - 1] ?? 0, 0, node);
  return next;
}

/** The node at `from` put first in the group at `group` (a path in the tree as it was). */
export function moveInto(nodes: TreeNode[], from: Path, group: Path): TreeNode[] {
  return moveBefore(nodes, from, [...group, 0]);
}

/**
 * One step up (-1) or down (+1) as a keyboard moves it: past its sibling, into a group it meets
 * (as the group's last child going up, its first going down), out of its group at either end.
 */
export function step(nodes: TreeNode[], path: Path, direction: -1 | 1): TreeNode[] {
  const index = path[path.length - 1] ?? 0;
  const parent = path.slice(0, -1);
  const siblings = siblingsOf(nodes, path);
  const neighbour = siblings[index + direction];
  if (!neighbour) {
    if (parent.length === 0) return nodes;
    const parentIndex = parent[parent.length - 1] ?? 0;
    return moveBefore(nodes, path, [...parent.slice(0, -1), parentIndex + (direction === 1 ? 1 : 0)]);
  }
  const neighbourPath = [...parent, index + direction];
  if (neighbour.type === 'group' && !neighbour.embedded) {
    return moveBefore(nodes, path, [...neighbourPath, direction === 1 ? 0 : neighbour.children.length]);
  }
  return moveBefore(nodes, path, [...parent, direction === 1 ? index + 2 : index - 1]);
}

export function setVisible(nodes: TreeNode[], path: Path, visible: boolean): TreeNode[] {
  const next = copy(nodes);
  const node = nodeAt(next, path);
  if (node) node.visible = visible;
  return next;
}

/** A new empty group on top of the tree. */
export function addGroup(nodes: TreeNode[], name: string): TreeNode[] {
  const group: TreeGroup = {
    type: 'group',
    name,
    visible: true,
    expanded: true,
    mutually_exclusive: false,
    children: [],
  };
  return [group, ...copy(nodes)];
}

/** The group at `path` replaced by its children, in its place. */
export function ungroup(nodes: TreeNode[], path: Path): TreeNode[] {
  const next = copy(nodes);
  const siblings = siblingsOf(next, path);
  const index = path[path.length - 1] ?? 0;
  const group = siblings[index];
  if (group?.type !== 'group') return nodes;
  siblings.splice(index, 1, ...group.children);
  return next;
}

/** The layers' names top first, as the tree draws them. */
export function layersTopFirst(nodes: TreeNode[]): string[] {
  return nodes.flatMap((node) => (node.type === 'layer' ? [node.name] : layersTopFirst(node.children)));
}

/** The layers the tree hides by default: unchecked themselves or inside an unchecked group. */
export function hiddenLayers(nodes: TreeNode[], parentHidden = false): string[] {
  return nodes.flatMap((node) => {
    const hidden = parentHidden || !node.visible;
    if (node.type === 'layer') return hidden ? [node.name] : [];
    return hiddenLayers(node.children, hidden);
  });
}

export function groupNames(nodes: TreeNode[]): string[] {
  return nodes.flatMap((node) => (node.type === 'group' ? [node.name, ...groupNames(node.children)] : []));
}

/** What a group publishes of itself, and how it shows its children. */
export type GroupFields = Pick<TreeGroup, 'name' | 'title' | 'short_name' | 'abstract' | 'mutually_exclusive'>;

/** The group at `path` with `fields` changed. */
export function setGroupFields(nodes: TreeNode[], path: Path, fields: GroupFields): TreeNode[] {
  const next = copy(nodes);
  const node = nodeAt(next, path);
  if (node?.type === 'group') Object.assign(node, fields);
  return next;
}

/** The path of the layer named `name`, undefined when the tree lacks it. */
export function pathOf(nodes: TreeNode[], name: string, parent: Path = []): Path | undefined {
  for (const [index, node] of nodes.entries()) {
    const path = [...parent, index];
    if (node.type === 'layer' && node.name === name) return path;
    const inside = node.type === 'group' ? pathOf(node.children, name, path) : undefined;
    if (inside) return inside;
  }
  return undefined;
}

/** Where a layer added from the console goes: on top, at the bottom, or first in a group. */
export type Placement = { at: 'top' } | { at: 'bottom' } | { at: 'group'; group: Path; name: string };

/** The groups a layer can be put into (embedded ones cannot), named with the groups they are in. */
export function groupChoices(
  nodes: TreeNode[],
  parent: Path = [],
  within = '',
): Array<{ path: Path; name: string; label: string }> {
  return nodes.flatMap((node, index) => {
    if (node.type !== 'group' || node.embedded) return [];
    const path = [...parent, index];
    const label = within ? `${within} › ${node.name}` : node.name;
    return [{ path, name: node.name, label }, ...groupChoices(node.children, path, label)];
  });
}

/**
 * The layer `name` taken from where it is and put at `placement`, whose group's path is one of the
 * tree without that layer (the tree the operator chose from, before the layer was added). In a
 * mutually exclusive group it comes hidden, so that the child shown stays the one shown.
 */
export function placeLayer(nodes: TreeNode[], name: string, placement: Placement): TreeNode[] {
  const from = pathOf(nodes, name);
  if (!from) throw new Error(`The tree has no layer ${name}.`);
  const next = copy(nodes);
  const [node] = siblingsOf(next, from).splice(from[from.length - 1] ?? 0, 1);
  if (!node) return nodes;
  if (placement.at === 'top') next.unshift(node);
  else if (placement.at === 'bottom') next.push(node);
  else {
    const group = nodeAt(next, placement.group);
    if (group?.type !== 'group' || group.embedded || group.name !== placement.name) {
      throw new Error(`Group ${placement.name} is no longer where it was in the layer tree.`);
    }
    if (group.mutually_exclusive) node.visible = false;
    group.children.unshift(node);
  }
  return next;
}

/**
 * An explicit drawing order (top first) with `name` put as `placement` put it in the tree `nodes`:
 * first, last, or in a group before the first layer below it in the tree that the order holds.
 */
export function orderAsPlaced(order: string[], nodes: TreeNode[], name: string, placement: Placement): string[] {
  const rest = order.filter((each) => each !== name);
  if (placement.at === 'top') return [name, ...rest];
  const topFirst = layersTopFirst(nodes);
  const below = topFirst.slice(topFirst.indexOf(name) + 1).find((each) => rest.includes(each));
  rest.splice(placement.at === 'bottom' || below === undefined ? rest.length : rest.indexOf(below), 0, name);
  return rest;
}
