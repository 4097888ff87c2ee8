/**
 * Raster processing of a project: a layer's histogram as a chart, the raster calculator as a form
 * whose result is added to the project as a layer and shown on a map, and overviews.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api, ApiError } from '../api/client';
import { type LayerInfo, layerInfo, loadLayers } from '../api/layers';
import { type ProjectRef, projectRef, schemaQuery } from '../api/projects';
import { Chart } from '../components/chart';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorMessage, Loading } from '../components/messages';
import { NumberField } from '../components/number-field';
import { OverviewsPanel } from '../components/overviews-panel';
import { Page } from '../components/page';
import { ProjectMap } from '../components/project-map';
import { ProjectTabs } from '../components/project-tabs';
import { RasterLayerField } from '../components/raster-layer-field';
import { useMayWrite } from '../components/use-access';
import { useAction, useApi } from '../components/use-api';
import type { PageProps } from '../routes';

type Histogram = Answer<'/api/processing/raster/histogram/{project}/{layer}', 'post'>;

const COLOURS = ['#1d5fa8', '#2e7d32', '#b3261e', '#6a1b9a'];

export default function ProcessingPage({ params, query }: PageProps): JSX.Element {
  const ref = projectRef(params, query);
  const layers = useApi((signal) => loadLayers(ref, signal), [ref.project, ref.schema]);
  const server = useApi((signal) => api.get('/api/server', { signal }), []);
  const mayWrite = useMayWrite(ref);
  const rasters = (layers.data ?? []).filter((layer) => layer.type === 'raster').map((layer) => layer.name);
  return (
    <Page title={`${ref.project}: processing`}>
      <ProjectTabs project={ref} current="/processing" />
      <ErrorMessage error={layers.error ?? server.error} />
      {!layers.data && layers.loading && <Loading what="layers" />}
      {layers.data && rasters.length === 0 && (
        <p class="card muted">This project has no raster layer: add one on the map page to process it.</p>
      )}
      {rasters.length > 0 && server.data && (
        <div class="grid-2">
          <HistogramPanel project={ref} rasters={rasters} />
          {mayWrite && (
            <>
              <CalculatorPanel
                project={ref}
                rasters={rasters}
                layers={(layers.data ?? []).map((layer) => layer.name)}
                folder={server.data.data_roots[0] ?? ''}
                onAdded={layers.reload}
              />
              <OverviewsPanel project={ref} rasters={rasters} />
            </>
          )}
        </div>
      )}
    </Page>
  );
}

function HistogramPanel({ project, rasters }: { project: ProjectRef; rasters: string[] }): JSX.Element {
  const [layer, setLayer] = useState(rasters[0] ?? '');
  const [bins, setBins] = useState('64');
  const [histogram, setHistogram] = useState<{ layer: string; bands: Histogram } | undefined>(undefined);
  const compute = useAction(async () => {
    const bands = await api.post('/api/processing/raster/histogram/{project}/{layer}', {
      path: { project: project.project, layer },
      query: schemaQuery(project),
      body: { count: Number(bins) },
    });
    setHistogram({ layer, bands });
  });
  return (
    <section class="card" aria-labelledby="histogram-title">
      <h2 id="histogram-title">Histogram</h2>
      <form
        class="form"
        aria-label="Histogram"
        onSubmit={(event) => {
          event.preventDefault();
          void compute.run();
        }}
      >
        <div class="fields">
          <RasterLayerField rasters={rasters} value={layer} onChange={setLayer} />
          <NumberField label="Bins" min={1} max={10000} value={bins} onInput={setBins} />
        </div>
        <button type="submit" class="primary" disabled={compute.busy}>
          {compute.busy ? 'Counting pixels…' : 'Draw the histogram'}
        </button>
      </form>
      <ErrorMessage error={compute.error} />
      {histogram &&
        Object.entries(histogram.bands).map(([band, { min, max, values }], index) => (
          <BandChart key={`${histogram.layer}/${band}`} band={band} min={min} max={max} values={values} index={index} />
        ))}
    </section>
  );
}

function BandChart(props: { band: string; min: number; max: number; values: number[]; index: number }): JSX.Element {
  const width = (props.max - props.min) / Math.max(props.values.length, 1);
  const centres = props.values.map((_, bin) => props.min + width * (bin + 0.5));
  const pixels = props.values.reduce((sum, count) => sum + count, 0);
  const peak = props.values.indexOf(Math.max(...props.values));
  return (
    <Chart
      title={`Band ${props.band}`}
      kind="bins"
      data={[centres, props.values]}
      series={[{ label: 'Pixels', colour: COLOURS[props.index % COLOURS.length] ?? '#1d5fa8' }]}
    >
      <p class="muted">
        {pixels} pixels from {Number(props.min.toPrecision(5))} to {Number(props.max.toPrecision(5))} in{' '}
        {props.values.length} bins; the fullest bin is around {Number(centres[peak]?.toPrecision(4))}.
      </p>
    </Chart>
  );
}

function CalculatorPanel(props: {
  project: ProjectRef;
  rasters: string[];
  /** Every layer of the project, whose names a new layer may not take. */
  layers: string[];
  folder: string;
  onAdded: () => void;
}): JSX.Element {
  const [expression, setExpression] = useState(`${props.rasters[0] ?? ''}@1 * 2`);
  const [name, setName] = useState('calculated');
  const [output, setOutput] = useState(props.folder ? `${props.folder}/${props.project.project}-calculated.tif` : '');
  const [step, setStep] = useState<string | undefined>(undefined);
  const [result, setResult] = useState<LayerInfo & { name: string }>();
  const [mapError, setMapError] = useState<Error | undefined>(undefined);
  const options = { path: { project: props.project.project }, query: schemaQuery(props.project) };
  // The file the API found at the output, which it replaces only once the person confirms it.
  const [existing, setExisting] = useState<string | undefined>(undefined);
  const calculate = useAction(async (overwrite: boolean) => {
    setResult(undefined);
    // Checked first, so that a taken name does not leave a calculated GeoTIFF without its layer.
    if (props.layers.includes(name))
      throw new Error(`Project ${props.project.project} has a layer named “${name}” already: choose another name.`);
    setStep('Calculating the raster (step 1 of 2)…');
    try {
      const body = { expression, output, ...(overwrite && { overwrite: true }) };
      await api.post('/api/processing/raster/calculator/{project}', { ...options, body });
    } catch (error) {
      // 409 also refuses a layer's own datasource, which no confirmation replaces.
      if (!overwrite && error instanceof ApiError && error.code === 'output_exists') {
        setExisting(output);
        return;
      }
      throw error;
    }
    setStep('Adding the result as a layer (step 2 of 2)…');
    await api.post('/api/projects/{project}/layers', {
      ...options,
      body: { datasource: output, name, type: 'raster' },
    });
    setResult({ ...(await layerInfo(props.project, name)), name });
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="calculator-title">
      <h2 id="calculator-title">Raster calculator</h2>
      <form
        class="form"
        aria-label="Raster calculator"
        onSubmit={(event) => {
          event.preventDefault();
          void calculate.run(false);
        }}
      >
        <div class="fields">
          <label>
            Expression
            <input required value={expression} onInput={(event) => setExpression(event.currentTarget.value)} />
          </label>
          <label>
            Output GeoTIFF
            <input
              required
              value={output}
              placeholder="/data/result.tif"
              onInput={(event) => setOutput(event.currentTarget.value)}
            />
          </label>
          <label>
            New layer name
            <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </label>
        </div>
        <p class="muted">Bands are written layer@band, as in QGIS: {props.rasters.map((r) => `${r}@1`).join(', ')}.</p>
        <button type="submit" class="primary" disabled={calculate.busy}>
          {calculate.busy ? 'Calculating…' : 'Calculate and add the layer'}
        </button>
      </form>
      {calculate.busy && (
        <div role="status">
          <progress aria-label="Calculation in progress" />
          <p class="muted">{step}</p>
        </div>
      )}
      <ErrorMessage error={calculate.error} />
      {existing !== undefined && (
        <ConfirmDialog
          title="Replace the existing file?"
          confirm="Replace the file"
          cancel="Keep the file"
          onClose={() => setExisting(undefined)}
          onConfirm={async () => {
            void calculate.run(true);
          }}
        >
          <p>
            <strong>{existing}</strong> exists already (the API answered 409). Replacing it changes what every layer
            that reads it draws, in every project, and cannot be undone.
          </p>
        </ConfirmDialog>
      )}
      {result && (
        <>
          <p role="status">
            Layer <strong>{result.name}</strong> added: {result.bands} band(s) of {result.data_type}, {result.crs}.
          </p>
          <ProjectMap
            project={props.project}
            layers={[{ name: result.name, visible: true, bbox: result.bbox ?? '', crs: result.crs }]}
            onError={setMapError}
          />
          <ErrorMessage error={mapError} />
        </>
      )}
    </section>
  );
}
