/**
 * Builds a raster layer's overviews (the reduced copies QGIS Server draws small scales from), as
 * an external `.ovr` beside the raster; a raster that has some already is left as it is.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from './messages';
import { RasterLayerField } from './raster-layer-field';
import { useAction } from './use-api';

type Overviews = Answer<'/api/processing/raster/overviews/{project}/{layer}', 'post'>;

function outcome(result: Overviews): string {
  const factors = result.factors.join(', ');
  if (result.file !== undefined) return `Overviews built at factors ${factors} in ${result.file}.`;
  if (result.factors.length > 0)
    return `Layer ${result.layer} had overviews already, at factors ${factors}: left as they are.`;
  return `Layer ${result.layer} needs no overviews: it fits in 256 × 256 pixels.`;
}

export function OverviewsPanel({ project, rasters }: { project: ProjectRef; rasters: string[] }): JSX.Element {
  const [layer, setLayer] = useState(rasters[0] ?? '');
  const [result, setResult] = useState<Overviews | undefined>(undefined);
  const build = useAction(async () => {
    setResult(undefined);
    setResult(
      await api.post('/api/processing/raster/overviews/{project}/{layer}', {
        path: { project: project.project, layer },
        query: schemaQuery(project),
      }),
    );
  });
  return (
    <section class="card" aria-labelledby="overviews-title">
      <h2 id="overviews-title">Overviews</h2>
      <p class="muted">
        Reduced copies of a raster that QGIS Server draws small scales from, written beside it as a .ovr file.
      </p>
      <form
        class="form"
        aria-label="Overviews"
        onSubmit={(event) => {
          event.preventDefault();
          void build.run();
        }}
      >
        <div class="fields">
          <RasterLayerField rasters={rasters} value={layer} onChange={setLayer} />
        </div>
        <button type="submit" class="primary" disabled={build.busy}>
          {build.busy ? 'Building overviews…' : 'Build overviews'}
        </button>
      </form>
      <ErrorMessage error={build.error} />
      {result && <p role="status">{outcome(result)}</p>}
    </section>
  );
}
