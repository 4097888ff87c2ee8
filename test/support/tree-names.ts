/** A project's layer tree as `GET /api/projects/{project}/tree` answers it, told as names. */
export interface TreeNode {
  type: 'layer' | 'group';
  name: string;
  visible?: boolean;
  children?: TreeNode[];
}

/** The tree as names: `group[child, child]` for groups. */
export function names(nodes: TreeNode[]): string[] {
  return nodes.map((node) =>
    node.type === 'group' ? `${node.name}[${names(node.children ?? []).join(', ')}]` : node.name,
  );
}
