import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { addLayer, LayerNotMoved } from '../api/add-layer';
import { api } from '../api/client';
import { type LayerInfo } from '../api/layers';
import { type ProjectRef, projectRef, schemaQuery } from '../api/projects';
import { groupChoices, type LayerTree, type Placement } from '../api/tree-edits';
import { AttributeTable } from '../components/attribute-table';
import { useBasemap } from '../components/basemap-picker';
import { ConfirmDialog } from '../components/confirm-dialog';
import { type Candidate, DatasourcePicker } from '../components/datasource-picker';
import { Dialog } from '../components/dialog';
import { FeatureInfo } from '../components/feature-info';
import { LayerPropertiesDialog } from '../components/layer-properties';
import { LayerSourceDialog } from '../components/layer-source';
import { LayerStyles } from '../components/layer-styles';
import { LayerTreePanel } from '../components/layer-tree';
import { LegendPanel } from '../components/legend-panel';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { ProjectCheck } from '../components/project-check';
import { type MapQuery, ProjectMap, zoomable, type ZoomRequest } from '../components/project-map';
import { ProjectTabs } from '../components/project-tabs';
import { SldUpload } from '../components/sld-upload';
import { geometryClass, StyleEditor } from '../components/style-editor';
import { useMayWrite } from '../components/use-access';
import { useAction, useApi } from '../components/use-api';
import { useLayerVisibility } from '../components/use-layer-visibility';
import { useProjectLayers } from '../components/use-project-layers';
import { useViewAs } from '../components/view-as';
import type { PageProps } from '../routes';

export default function ProjectPage({ params, query }: PageProps): JSX.Element {
  const ref = projectRef(params, query);
  const server = useApi((signal) => api.get('/api/server', { signal }), []);
  const { layers, drawn: rows, tree, reload } = useProjectLayers(ref);
  // The style being edited, unsaved, as a JSON body: the map draws its layer with it.
  const [drafts, setDrafts] = useState<Record<string, string | undefined>>({});
  const [mapError, setMapError] = useState<Error | undefined>(undefined);
  const [adding, setAdding] = useState(false);
  const [styling, setStyling] = useState<string | undefined>(undefined);
  const [removing, setRemoving] = useState<string | undefined>(undefined);
  const [removed, setRemoved] = useState<string | undefined>(undefined);
  const [notMoved, setNotMoved] = useState<Error | undefined>(undefined);
  const [sourcing, setSourcing] = useState<string | undefined>(undefined);
  const [resourced, setResourced] = useState<string | undefined>(undefined);
  const visibility = useLayerVisibility(tree.current, tree.error !== undefined);
  const [editing, setEditing] = useState<string | undefined>(undefined);
  // Bumped by an SLD upload or the style editor: the layer may draw another style under the name it had.
  const [revision, setRevision] = useState(0);
  const [asked, setAsked] = useState<MapQuery | undefined>(undefined);
  const [zoom, setZoom] = useState<ZoomRequest | undefined>(undefined);
  const [table, setTable] = useState<string | undefined>(undefined);
  const [stylesOf, setStylesOf] = useState<string | undefined>(undefined);
  const mayWrite = useMayWrite(ref);
  const viewAs = useViewAs(ref);
  const { basemap, picker: basemapPicker } = useBasemap(server.data?.basemaps ?? []);
  const mapLayers = rows
    .filter((row) => row.valid && viewAs.sees(row.name))
    .map((row) => ({
      name: row.name,
      visible: visibility.known && !visibility.hidden.has(row.name),
      draft: drafts[row.name],
      revision,
      current: row.current_style,
      bbox: row.bbox ?? '',
      bboxWgs84: row.bbox_wgs84,
      crs: row.crs,
    }));
  const shown = mapLayers.filter((layer) => layer.visible);
  // The legend and the check ask QGIS Server too (the check for its capabilities): they wait for
  // the map's first answer, which the operator came for, rather than share its two cores with it.
  const [mapAnswered, setMapAnswered] = useState(false);
  const nothingToDraw = layers.data !== undefined && visibility.known && shown.length === 0;
  const mapFirst = mapAnswered || nothingToDraw || layers.error !== undefined;
  const zoomTo = (layer?: string): void =>
    setZoom({ ...(layer === undefined ? {} : { layer }), n: (zoom?.n ?? 0) + 1 });
  const styleRow = rows.find((row) => row.name === stylesOf);
  const sourceRow = rows.find((row) => row.name === sourcing);
  const styled = rows.find((row) => row.name === styling);
  const styledKind = styled?.type === 'raster' ? 'raster' : geometryClass(styled?.geometry);
  // The editor opens below the map: brought into view, with the focus on its heading.
  useEffect(() => {
    const heading = styling === undefined ? null : document.getElementById('style-title');
    heading?.scrollIntoView({ block: 'start' });
    heading?.focus();
  }, [styling]);

  return (
    <Page
      title={ref.project}
      actions={
        mayWrite && (
          <button type="button" class="primary" onClick={() => setAdding(true)}>
            Add layer
          </button>
        )
      }
    >
      <ProjectTabs project={ref} current="" />
      <ErrorMessage error={layers.error ?? server.error} />
      <div class="layout-map">
        <div>
          {rows.length === 0 && !layers.loading ? (
            <p class="card muted">
              This project has no layer yet{mayWrite && ': choose “Add layer” to draw the first one'}.
            </p>
          ) : (
            <>
              {viewAs.control}
              <ProjectMap
                project={ref}
                layers={mapLayers}
                onError={setMapError}
                onAnswer={() => setMapAnswered(true)}
                onQuery={setAsked}
                zoom={zoom}
                viewAs={viewAs.role}
                basemap={basemap}
              />
              <div class="actions map-tools">
                <button type="button" onClick={() => zoomTo()}>
                  Zoom to the project
                </button>
                {basemapPicker}
              </div>
            </>
          )}
          <ErrorMessage error={mapError} />
          {asked && shown.length > 0 && (
            <FeatureInfo
              project={ref}
              layers={shown.map((layer) => layer.name)}
              query={asked}
              viewAs={viewAs.role}
              onClose={() => {
                setAsked(undefined);
                document.querySelector<HTMLElement>('[data-testid="project-map"]')?.focus();
              }}
            />
          )}
        </div>
        <section aria-labelledby="layers-title">
          <h2 id="layers-title">Layers</h2>
          {layers.data === undefined && layers.loading && <Loading what="layers" />}
          {removed && (
            <p role="status" class="muted">
              Layer {removed} was removed from {ref.project}.
            </p>
          )}
          <ErrorMessage error={notMoved} />
          {resourced && (
            <p role="status" class="muted">
              {resourced}
            </p>
          )}
          <ul class="layer-list">
            {[...rows].reverse().map((row) => (
              <li key={row.name} class="card">
                <label class="check">
                  <input
                    type="checkbox"
                    checked={!visibility.hidden.has(row.name)}
                    disabled={!row.valid}
                    onChange={(event) => visibility.show(row.name, event.currentTarget.checked)}
                  />
                  <strong>{row.name}</strong>
                  <span class="visually-hidden"> visible on the map</span>
                </label>{' '}
                {row.valid ? <span class="badge ok">valid</span> : <span class="badge broken">broken</span>}
                <LayerFacts info={row} />
                {mapLayers.some((layer) => layer.name === row.name && zoomable(layer)) && (
                  <button type="button" onClick={() => zoomTo(row.name)} aria-label={`Zoom to ${row.name}`}>
                    Zoom to
                  </button>
                )}
                {(row.type === 'vector' || row.type === 'raster') && row.valid && (
                  <button
                    type="button"
                    onClick={() => setTable(row.name)}
                    aria-label={`Attribute table of ${row.name}`}
                  >
                    Attributes…
                  </button>
                )}
                {row.valid && (
                  <button type="button" onClick={() => setStylesOf(row.name)} aria-label={`Styles of ${row.name}`}>
                    Styles…
                  </button>
                )}
                {mayWrite && (row.type === 'vector' || row.type === 'raster') && row.valid && (
                  <button
                    type="button"
                    onClick={() => setStyling(row.name)}
                    aria-label={`Edit the style of ${row.name}`}
                  >
                    Edit style…
                  </button>
                )}
                {mayWrite && (
                  <>
                    <button
                      type="button"
                      class={row.valid ? undefined : 'primary'}
                      onClick={() => setSourcing(row.name)}
                      aria-label={`Change the source of ${row.name}`}
                    >
                      {row.valid ? 'Source…' : 'Fix the source…'}
                    </button>
                    <button
                      type="button"
                      class="danger"
                      onClick={() => setRemoving(row.name)}
                      aria-label={`Remove layer ${row.name}`}
                    >
                      Remove…
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
          {mapFirst && (
            <LegendPanel
              project={ref}
              layers={[...shown].reverse().map((layer) => ({ name: layer.name, style: layer.current }))}
              viewAs={viewAs.role}
            />
          )}
        </section>
      </div>
      {table && <AttributeTable project={ref} layer={table} onClose={() => setTable(undefined)} />}
      {styleRow && (
        <LayerStyles
          project={ref}
          layer={styleRow.name}
          styles={styleRow.styles}
          current={styleRow.current_style}
          mayWrite={mayWrite}
          onClose={() => setStylesOf(undefined)}
          onChanged={reload}
        />
      )}
      {mayWrite && tree.current && (
        <LayerTreePanel project={ref} tree={tree.current} onSaved={tree.saved} onProperties={setEditing} />
      )}
      <ErrorMessage error={tree.error} />
      {editing && (
        <LayerPropertiesDialog
          project={ref}
          layer={editing}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            reload();
          }}
        />
      )}
      {layers.data && mapFirst && <ProjectCheck project={ref} version={layers.data} />}
      {styled && styledKind && (
        <section class="card" aria-labelledby="style-title">
          <h2 id="style-title" tabIndex={-1}>
            Style of {styled.name}
          </h2>
          <StyleEditor
            key={styled.name}
            project={ref}
            layer={styled.name}
            kind={styledKind}
            current={styled.current_style}
            onDraft={(body) => setDrafts((before) => ({ ...before, [styled.name]: body }))}
            onChanged={() => {
              // A style replaced under its name draws differently: the map and legend are asked again.
              setRevision(revision + 1);
              reload();
            }}
          />
          {styledKind !== 'raster' && (
            <>
              <h3>Upload SLD</h3>
              <SldUpload
                project={ref}
                layer={styled.name}
                onChanged={() => {
                  setRevision(revision + 1);
                  reload();
                }}
              />
            </>
          )}
        </section>
      )}
      {sourceRow && (
        <LayerSourceDialog
          project={ref}
          layer={sourceRow}
          roots={server.data?.data_roots ?? []}
          objectStorage={server.data?.object_storage ?? false}
          onClose={() => setSourcing(undefined)}
          onChanged={(datasource) => {
            setResourced(`Layer ${sourceRow.name} now reads ${datasource}.`);
            reload();
          }}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove layer “${removing}”?`}
          confirm={`Remove ${removing}`}
          cancel="Keep it"
          onClose={() => setRemoving(undefined)}
          onConfirm={async () => {
            await api.delete('/api/projects/{project}/layers/{layer}', {
              path: { project: ref.project, layer: removing },
              query: schemaQuery(ref),
            });
            if (styling === removing) setStyling(undefined);
            setRemoved(removing);
            reload();
          }}
        >
          <p>
            The layer leaves project {ref.project}, its map and its tile cache. The data it reads stays where it is: it
            can be added again with “Add layer”.
          </p>
        </ConfirmDialog>
      )}
      {adding && (
        <AddLayer
          project={ref}
          tree={tree.current}
          roots={server.data?.data_roots ?? []}
          objectStorage={server.data?.object_storage ?? false}
          onClose={() => setAdding(false)}
          onAdded={(failedMove) => {
            setNotMoved(failedMove);
            reload();
          }}
        />
      )}
    </Page>
  );
}

function LayerFacts({ info }: { info: LayerInfo }): JSX.Element {
  return (
    <dl class="facts">
      <dt>Type</dt>
      <dd>{info.type}</dd>
      <dt>CRS</dt>
      <dd>{info.crs}</dd>
      <dt>Extent</dt>
      <dd>{info.bbox}</dd>
      {info.geometry && (
        <>
          <dt>Geometry</dt>
          <dd>{info.geometry}</dd>
        </>
      )}
      {info.bands !== undefined && (
        <>
          <dt>Bands</dt>
          <dd>
            {info.bands} ({info.data_type})
          </dd>
        </>
      )}
      {!info.valid && (
        <>
          <dt>Why broken</dt>
          <dd class="error-inline">{info.invalid_reason ?? 'QGIS cannot open its datasource'}</dd>
        </>
      )}
      <dt>Current style</dt>
      <dd>{info.current_style}</dd>
      <dt>Styles</dt>
      <dd>{info.styles.join(', ')}</dd>
      <dt>Source</dt>
      <dd>
        <code>{info.source}</code>
      </dd>
    </dl>
  );
}

function AddLayer(props: {
  project: ProjectRef;
  /** The project's layer tree, whose groups the layer may go into. */
  tree: LayerTree | undefined;
  roots: string[];
  objectStorage: boolean;
  onClose: () => void;
  /** Told the failure to move the layer where asked, when it was added on top instead. */
  onAdded: (failedMove: Error | undefined) => void;
}): JSX.Element {
  const [datasource, setDatasource] = useState('');
  const [name, setName] = useState('');
  const [type, setType] = useState<'vector' | 'raster'>('vector');
  const [crs, setCrs] = useState('');
  const [placement, setPlacement] = useState('top');
  const pick = (layer: Candidate): void => {
    setDatasource(layer.datasource);
    setName(layer.name);
    setType(layer.type);
    setCrs(layer.crs ?? '');
  };
  const add = useAction(async () => {
    const failedMove = await addLayer(
      props.project,
      { datasource, name, type, ...(crs ? { crs } : {}) },
      placementOf(placement, props.tree),
    ).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof LayerNotMoved) return error;
        throw error;
      },
    );
    props.onClose();
    props.onAdded(failedMove);
  });
  const submit = (event: Event): void => {
    event.preventDefault();
    void add.run();
  };
  return (
    <Dialog title="Add a layer" open onClose={props.onClose}>
      <form class="form" onSubmit={(event) => void submit(event)}>
        <DatasourcePicker
          roots={props.roots}
          objectStorage={props.objectStorage}
          project={props.project.project}
          picked={datasource}
          onPick={pick}
        />
        <div class="fields">
          <label>
            Datasource
            <input required value={datasource} onInput={(event) => setDatasource(event.currentTarget.value)} />
          </label>
          <label>
            Layer name
            <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </label>
          <label>
            Type
            <select value={type} onChange={(event) => setType(event.currentTarget.value as 'vector' | 'raster')}>
              <option value="vector">vector</option>
              <option value="raster">raster</option>
            </select>
          </label>
          <label>
            CRS
            <input value={crs} placeholder="EPSG:4326" onInput={(event) => setCrs(event.currentTarget.value)} />
          </label>
          <label>
            Place it
            <select value={placement} onChange={(event) => setPlacement(event.currentTarget.value)}>
              <option value="top">on top of the layer tree</option>
              <option value="bottom">at the bottom of the layer tree</option>
              {groupChoices(props.tree?.children ?? []).map(({ path, label }) => (
                <option key={path.join('.')} value={path.join('.')}>
                  first in group {label}
                </option>
              ))}
            </select>
          </label>
        </div>
        <ErrorMessage error={add.error} />
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={add.busy}>
            {add.busy ? 'Adding…' : 'Add layer'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The placement a value of the "Place it" list stands for: top, bottom, or a group's path. */
function placementOf(value: string, tree: LayerTree | undefined): Placement {
  if (value === 'top' || value === 'bottom') return { at: value };
  const group = groupChoices(tree?.children ?? []).find(({ path }) => path.join('.') === value);
  return group ? { at: 'group', group: group.path, name: group.name } : { at: 'top' };
}
