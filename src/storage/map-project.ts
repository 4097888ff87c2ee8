import { basename } from 'node:path';

import { type ProjectRef } from './project-ref.js';
import { type ProjectStore } from './project-store.js';

/** The project a MAP value could name: a stored project's `postgresql:?...` URI, or a project file. */
function candidate(map: string): ProjectRef | undefined {
  if (map.startsWith('postgresql:')) {
    const query = new URLSearchParams(map.slice(map.indexOf('?') + 1));
    const name = query.get('project');
    return name === null ? undefined : { name, schema: query.get('schema') ?? 'public' };
  }
  const file = basename(map);
  const name = file.replace(/\.qg[sz]$/i, '');
  return name === file || name === '' ? undefined : { name, schema: 'public' };
}

/**
 * The project of `store` whose MAP value (mapParameter) is exactly `map`; undefined for any other
 * value, however close: what QGIS Server opens for a MAP spelt otherwise is no project of Steward's.
 */
export async function projectOfMap(store: ProjectStore, map: string): Promise<ProjectRef | undefined> {
  const ref = candidate(map);
  if (ref === undefined) return undefined;
  try {
    return (await store.mapParameter(ref)) === map ? ref : undefined;
  } catch {
    return undefined;
  }
}
