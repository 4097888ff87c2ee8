/** A project's layers with what the API reports of each; a layer whose facts fail keeps the error. */
import { type Answer, api } from './client';
import { type ProjectRef, schemaQuery } from './projects';

export type LayerInfo = Answer<'/api/projects/{project}/layers/{layer}'>;
export type LayerRow = { name: string; info?: LayerInfo; error?: string };

export function layerInfo(ref: ProjectRef, layer: string, signal?: AbortSignal): Promise<LayerInfo> {
  return api.get('/api/projects/{project}/layers/{layer}', {
    path: { project: ref.project, layer },
    query: schemaQuery(ref),
    ...(signal ? { signal } : {}),
  });
}

export async function loadLayers(ref: ProjectRef, signal: AbortSignal): Promise<LayerRow[]> {
  const names = await api.get('/api/projects/{project}/layers', {
    path: { project: ref.project },
    query: schemaQuery(ref),
    signal,
  });
  return Promise.all(
    names.map(async (name) => {
      try {
        return { name, info: await layerInfo(ref, name, signal) };
      } catch (error) {
        return { name, error: (error as Error).message };
      }
    }),
  );
}
