/**
 * The project's layer tree (`GET/PUT /api/projects/{project}/tree`): groups and layers top first,
 * each with its visibility; reordered by dragging a row or with its up and down buttons, grouped
 * and ungrouped. Every change is saved at once, and the tree shown is the one the API answered.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import {
  addGroup,
  groupNames,
  type LayerTree,
  moveBefore,
  moveInto,
  nodeAt,
  type Path,
  setGroupFields,
  setVisible,
  step,
  type TreeNode,
  ungroup,
} from '../api/tree-edits';
import { GroupPropertiesDialog } from './group-properties';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

interface PanelProps {
  project: ProjectRef;
  tree: LayerTree;
  onSaved: (tree: LayerTree) => void;
  /** Opens the properties of a layer. */
  onProperties?: (layer: string) => void;
}

/** The button to give the focus back to once the tree is drawn again. */
type Refocus = { label: string } | undefined;

export function LayerTreePanel({ project, tree: saved, onSaved, onProperties }: PanelProps): JSX.Element {
  const [status, setStatus] = useState<string | undefined>(undefined);
  // A change is shown at once, and the API's answer (or the tree as it was, on a failure) after.
  const [pending, setPending] = useState<TreeNode[] | undefined>(undefined);
  const tree: LayerTree = pending ? { ...saved, children: pending } : saved;
  const [refocus, setRefocus] = useState<Refocus>(undefined);
  const dragged = useRef<Path | undefined>(undefined);
  const list = useRef<HTMLUListElement>(null);
  const save = useAction(async (children: TreeNode[], said: string, focus?: Refocus) => {
    setPending(children);
    try {
      const answer = await api.put('/api/projects/{project}/tree', {
        path: { project: project.project },
        query: schemaQuery(project),
        // The project's own drawing order, if it has one, is kept: absent, it would be dropped.
        body: { children, ...(saved.order ? { order: saved.order } : {}) },
      });
      onSaved(answer);
      setStatus(said);
      setRefocus(focus);
    } finally {
      setPending(undefined);
    }
  });
  useEffect(() => {
    if (!refocus) return;
    const button = [...(list.current?.querySelectorAll('button') ?? [])].find(
      (each) => each.getAttribute('aria-label') === refocus.label,
    );
    button?.focus();
    setRefocus(undefined);
  }, [tree, refocus]);

  const edit = (children: TreeNode[], said: string, focus?: Refocus): void => {
    if (!save.busy) void save.run(children, said, focus);
  };
  const [groupPath, setGroupPath] = useState<Path | undefined>(undefined);
  const group = groupPath && nodeAt(tree.children, groupPath);
  const actions: NodeActions = {
    step: (path, direction) => {
      const node = nodeAt(tree.children, path);
      const word = direction === -1 ? 'up' : 'down';
      if (node)
        edit(step(tree.children, path, direction), `${node.name} moved ${word}.`, {
          label: `Move ${node.name} ${word}`,
        });
    },
    visible: (path, visible) => {
      const node = nodeAt(tree.children, path);
      if (node)
        edit(setVisible(tree.children, path, visible), `${node.name} is ${visible ? 'shown' : 'hidden'} by default.`);
    },
    ungroup: (path) => {
      const node = nodeAt(tree.children, path);
      if (node) edit(ungroup(tree.children, path), `Group ${node.name} was dissolved; its layers stay in its place.`);
    },
    drag: (path) => {
      dragged.current = path;
    },
    drop: (target) => {
      const from = dragged.current;
      dragged.current = undefined;
      const node = from && nodeAt(tree.children, from);
      const onto = nodeAt(tree.children, target);
      if (!from || !node || !onto) return;
      const into = onto.type === 'group' && !onto.embedded;
      const moved = into ? moveInto(tree.children, from, target) : moveBefore(tree.children, from, target);
      // Onto itself, or a group into its own children: nothing moves, nothing is sent.
      if (moved === tree.children) return;
      edit(moved, into ? `${node.name} moved into group ${onto.name}.` : `${node.name} moved above ${onto.name}.`);
    },
    properties: onProperties,
    group: setGroupPath,
  };
  return (
    <section class="card" aria-labelledby="tree-title">
      <h2 id="tree-title">Layer tree</h2>
      <p class="muted">
        Top first: a layer is drawn over those below it. Drag a row onto another (onto a group to put it inside), or use
        its ↑ and ↓ buttons. An unchecked box hides the layer or group when a client first opens the project.
      </p>
      {tree.order && <OrderNote project={project} tree={tree} onSaved={onSaved} />}
      <ul class="tree" ref={list}>
        {tree.children.map((node, index) => (
          <TreeItem key={`${node.type}:${node.name}`} node={node} path={[index]} actions={actions} />
        ))}
      </ul>
      <NewGroup
        taken={groupNames(tree.children)}
        onAdd={(name) => edit(addGroup(tree.children, name), `Group ${name} added on top.`)}
      />
      {group?.type === 'group' && groupPath && (
        <GroupPropertiesDialog
          group={group}
          taken={groupNames(tree.children)}
          failure={save.error}
          onClose={() => setGroupPath(undefined)}
          onSave={(fields) =>
            save.run(setGroupFields(tree.children, groupPath, fields), `Group ${fields.name} saved.`, {
              label: `Properties of group ${fields.name}`,
            })
          }
        />
      )}
      <ErrorMessage error={save.error} />
      <p role="status" class="muted">
        {save.busy ? 'Saving the layer tree…' : status}
      </p>
    </section>
  );
}

interface NodeActions {
  step: (path: Path, direction: -1 | 1) => void;
  visible: (path: Path, visible: boolean) => void;
  ungroup: (path: Path) => void;
  drag: (path: Path) => void;
  drop: (path: Path) => void;
  properties: ((layer: string) => void) | undefined;
  group: (path: Path) => void;
}

function TreeItem({ node, path, actions }: { node: TreeNode; path: Path; actions: NodeActions }): JSX.Element {
  const group = node.type === 'group' ? node : undefined;
  const [over, setOver] = useState(false);
  return (
    <li
      class={over ? 'tree-node drop-target' : 'tree-node'}
      draggable
      data-testid={`tree-${node.type}-${node.name}`}
      onDragStart={(event) => {
        event.stopPropagation();
        event.dataTransfer?.setData('text/plain', node.name);
        actions.drag(path);
      }}
      onDragOver={(event) => {
        event.preventDefault();
        event.stopPropagation();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(event) => {
        event.preventDefault();
        event.stopPropagation();
        setOver(false);
        actions.drop(path);
      }}
    >
      <div class="tree-row">
        <label class="check">
          <input
            type="checkbox"
            checked={node.visible}
            onChange={(event) => actions.visible(path, event.currentTarget.checked)}
          />
          {group ? <strong>{node.name}</strong> : node.name}
          <span class="visually-hidden"> visible by default</span>
        </label>
        {group && <span class="badge">{group.embedded ? 'embedded group' : 'group'}</span>}
        <span class="row-actions">
          <button type="button" class="icon" aria-label={`Move ${node.name} up`} onClick={() => actions.step(path, -1)}>
            ↑
          </button>
          <button
            type="button"
            class="icon"
            aria-label={`Move ${node.name} down`}
            onClick={() => actions.step(path, 1)}
          >
            ↓
          </button>
          {group && !group.embedded && (
            <button type="button" onClick={() => actions.group(path)} aria-label={`Properties of group ${node.name}`}>
              Properties…
            </button>
          )}
          {group && !group.embedded && (
            <button type="button" onClick={() => actions.ungroup(path)} aria-label={`Ungroup ${node.name}`}>
              Ungroup
            </button>
          )}
          {!group && actions.properties && (
            <button
              type="button"
              onClick={() => actions.properties?.(node.name)}
              aria-label={`Properties of ${node.name}`}
            >
              Properties…
            </button>
          )}
        </span>
      </div>
      {group && !group.embedded && (
        <ul class="tree">
          {group.children.map((child, index) => (
            <TreeItem key={`${child.type}:${child.name}`} node={child} path={[...path, index]} actions={actions} />
          ))}
        </ul>
      )}
      {group?.embedded && (
        <p class="muted">From another project: {group.children.map((child) => child.name).join(', ')}</p>
      )}
    </li>
  );
}

function NewGroup({ taken, onAdd }: { taken: string[]; onAdd: (name: string) => void }): JSX.Element {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = (event: Event): void => {
    event.preventDefault();
    const trimmed = name.trim();
    if (trimmed === '') return setError('The group needs a name.');
    if (taken.includes(trimmed)) return setError(`There is a group named “${trimmed}” already.`);
    setError(undefined);
    setName('');
    onAdd(trimmed);
  };
  return (
    <form class="inline-form" aria-label="Add a group" onSubmit={submit} noValidate>
      <label>
        New group
        <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <button type="submit">Add group</button>
      <ErrorMessage error={error} />
    </form>
  );
}

/** The project draws in an order of its own (QGIS Desktop's layer order panel), not the tree's. */
function OrderNote({ project, tree, onSaved }: Omit<PanelProps, 'onProperties'>): JSX.Element {
  const reset = useAction(async () => {
    const answer = await api.put('/api/projects/{project}/tree', {
      path: { project: project.project },
      query: schemaQuery(project),
      body: { children: tree.children, order: null },
    });
    onSaved(answer);
  });
  return (
    <div class="card muted">
      <p>
        This project draws its layers in an order of its own, top first: {tree.order?.join(', ')}. Moving rows changes
        the tree QGIS Server publishes, not that order.
      </p>
      <button type="button" disabled={reset.busy} onClick={() => void reset.run()}>
        Draw in the tree's order
      </button>
      <ErrorMessage error={reset.error} />
    </div>
  );
}
