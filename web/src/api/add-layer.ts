/**
 * Adds a layer to a project where the operator chose in its layer tree. The API adds it at the
 * bottom; another place is a second request, a `PUT` of the tree with the layer moved (and the
 * project's own drawing order, if it has one, with the layer at the same place).
 */
import { api, type Body } from './client';
import { type ProjectRef, schemaQuery } from './projects';
import { orderAsPlaced, placeLayer, type Placement } from './tree-edits';

export type NewLayer = Body<'/api/projects/{project}/layers', 'post'>;

/** The layer was added, but left where the API put it: moving it failed. */
export class LayerNotMoved extends Error {
  constructor(layer: string, reason: unknown) {
    super(
      `Layer ${layer} was added at the bottom of the layer tree, but moving it failed: ${
        reason instanceof Error ? reason.message : String(reason)
      } Move it in the layer tree below.`,
    );
    this.name = 'LayerNotMoved';
  }
}

export async function addLayer(ref: ProjectRef, layer: NewLayer, placement: Placement): Promise<void> {
  await api.post('/api/projects/{project}/layers', {
    path: { project: ref.project },
    query: schemaQuery(ref),
    body: layer,
  });
  try {
    await moveLayer(ref, layer.name, placement);
  } catch (error) {
    throw new LayerNotMoved(layer.name, error);
  }
}

async function moveLayer(ref: ProjectRef, name: string, placement: Placement): Promise<void> {
  const options = { path: { project: ref.project }, query: schemaQuery(ref) };
  const tree = await api.get('/api/projects/{project}/tree', options);
  const children = placeLayer(tree.children, name, placement);
  const order = tree.order ? { order: orderAsPlaced(tree.order, children, name, placement) } : {};
  const unchanged =
    JSON.stringify(children) === JSON.stringify(tree.children) &&
    JSON.stringify(order.order ?? tree.order) === JSON.stringify(tree.order);
  if (unchanged) return;
  await api.put('/api/projects/{project}/tree', { ...options, body: { children, ...order } });
}
