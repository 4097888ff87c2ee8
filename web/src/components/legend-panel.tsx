/**
 * The legend of the layers the map shows, top first: each one's image as QGIS Server draws it
 * (GetLegendGraphic through `GET .../layers/{layer}/legend`), fetched with the token.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { ApiError, apiUrl, send } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from './messages';

export interface LegendLayer {
  name: string;
  /** The style it is drawn with: a change draws its legend again. */
  style: string;
}

/** A legend that failed for a reason that may pass (a 5xx, the network) is asked again after this. */
const RETRY_MS = 3000;

function LegendImage({
  project,
  layer,
  viewAs,
}: {
  project: ProjectRef;
  layer: LegendLayer;
  viewAs: string | undefined;
}): JSX.Element {
  const [source, setSource] = useState<string | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    const mayPass = error !== undefined && !(error instanceof ApiError && error.status < 500);
    if (!mayPass) return undefined;
    const retry = setTimeout(() => setAttempt((value) => value + 1), RETRY_MS);
    return () => clearTimeout(retry);
  }, [error]);
  useEffect(() => {
    const controller = new AbortController();
    let made: string | undefined;
    const url = apiUrl(
      '/api/projects/{project}/layers/{layer}/legend',
      { project: project.project, layer: layer.name },
      { ...schemaQuery(project), view_as: viewAs },
    );
    send(url, { signal: controller.signal })
      .then((response) => response.blob())
      .then(
        (blob) => {
          made = URL.createObjectURL(blob);
          setSource(made);
          setError(undefined);
        },
        (failure: unknown) => {
          if (!controller.signal.aborted) setError(failure instanceof Error ? failure : new Error(String(failure)));
        },
      );
    return () => {
      controller.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [project.project, project.schema, layer.name, layer.style, attempt, viewAs]);
  return (
    <li>
      {/* QGIS Server's image starts with the layer's title. */}
      {source && <img src={source} alt={`Legend of ${layer.name}`} data-testid={`legend-${layer.name}`} />}
      <ErrorMessage error={error} />
    </li>
  );
}

/** The legend of `layers` (top first), or why there is none. */
export function LegendPanel({
  project,
  layers,
  viewAs,
}: {
  project: ProjectRef;
  layers: LegendLayer[];
  /** The role the legend is drawn as (view-as.tsx); undefined for the viewer's own. */
  viewAs?: string | undefined;
}): JSX.Element {
  return (
    <section class="card" aria-labelledby="legend-title">
      <h2 id="legend-title">Legend</h2>
      {layers.length === 0 ? (
        <p class="muted">No layer is shown on the map.</p>
      ) : (
        <ul class="legend">
          {layers.map((layer) => (
            <LegendImage key={layer.name} project={project} layer={layer} viewAs={viewAs} />
          ))}
        </ul>
      )}
    </section>
  );
}
