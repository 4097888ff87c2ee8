/**
 * "View as" on the project's map (docs/access.md): an administrator picks a role, and the map, its
 * legend and feature info are asked with `view_as`, so that QGIS Server draws them under that
 * role's rules; the layers shown are those the API lists for it. Only those who may list the
 * roles (administrators) are offered the choice; no one else asks for them.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from './messages';
import { useAdministrator } from './use-access';
import { useApi } from './use-api';

export interface ViewAs {
  /** The role viewed as; undefined for the administrator's own view. */
  role: string | undefined;
  /** Whether the map may show a layer: every one, or those the role may see. */
  sees: (layer: string) => boolean;
  /** The choice of a role, or nothing for who may not list them. */
  control: JSX.Element | null;
}

export function useViewAs(project: ProjectRef): ViewAs {
  const administrator = useAdministrator() === true;
  const roles = useApi(
    async (signal) => (administrator ? api.get('/api/roles', { signal }) : undefined),
    [administrator],
  );
  const [role, setRole] = useState<string | undefined>(undefined);
  const layers = useApi(
    async (signal) =>
      role === undefined
        ? undefined
        : new Set(
            await api.get('/api/projects/{project}/layers', {
              path: { project: project.project },
              query: { ...schemaQuery(project), view_as: role },
              signal,
            }),
          ),
    [project.project, project.schema, role],
  );
  const names = Object.keys(roles.data ?? {});
  const seen = role === undefined ? undefined : layers.data;
  const control =
    names.length === 0 ? null : (
      <div class="view-as">
        <label>
          View the map as{' '}
          <select
            value={role ?? ''}
            onChange={(event) => setRole(event.currentTarget.value === '' ? undefined : event.currentTarget.value)}
          >
            <option value="">yourself (every layer)</option>
            {names.map((name) => (
              <option key={name} value={name}>
                role {name}
              </option>
            ))}
          </select>
        </label>
        {role !== undefined && (
          <p class="muted" role="status">
            The map, legend and features are what role {role} is served: drawn by QGIS Server under its rules.
          </p>
        )}
        <ErrorMessage error={role === undefined ? undefined : layers.error} />
      </div>
    );
  // Until the role's layers are known, none is shown rather than one it may not see.
  return { role, sees: (layer) => role === undefined || (seen?.has(layer) ?? false), control };
}
