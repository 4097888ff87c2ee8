/** A project's layers with what the API reports of each. */
import { type Answer, api } from './client';
import { type ProjectRef, schemaQuery } from './projects';

export type LayerInfo = Answer<'/api/projects/{project}/layers/{layer}'>;

export function layerInfo(ref: ProjectRef, layer: string, signal?: AbortSignal): Promise<LayerInfo> {
  return api.get('/api/projects/{project}/layers/{layer}', {
    path: { project: ref.project, layer },
    query: schemaQuery(ref),
    ...(signal ? { signal } : {}),
  });
}

/** Every layer of the project, in project order, in one request. */
export function loadLayers(ref: ProjectRef, signal?: AbortSignal): Promise<LayerInfo[]> {
  return api.get('/api/projects/{project}/layer-summaries', {
    path: { project: ref.project },
    query: schemaQuery(ref),
    ...(signal ? { signal } : {}),
  });
}
