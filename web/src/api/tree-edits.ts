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
