/**
 * What QGIS Server finds under a point of the map (`GET .../feature-info`, its GetFeatureInfo):
 * each feature's layer and attributes, in a panel that takes the focus and closes with Escape.
 */
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage, Loading } from './messages';
import { type MapQuery } from './project-map';
import { useApi } from './use-api';

type Found = Answer<'/api/projects/{project}/feature-info'>['features'][number];

/** An attribute's value in words: null as QGIS shows it, objects as JSON. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // Numbers and booleans read the same in JSON.
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function FeatureTable({ feature }: { feature: Found }): JSX.Element {
  return (
    <table class="table attributes">
      <caption>
        {feature.layer} · feature {feature.id}
      </caption>
      <tbody>
        {Object.entries(feature.properties).map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{valueText(value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the answer says beside its features: nothing found, or layers the project keeps from being queried. */
function Unqueried({ layers, all, found }: { layers: string[]; all: boolean; found: number }): JSX.Element {
  const named = layers.map((layer) => `“${layer}”`).join(', ');
  const where = 'QGIS Desktop sets it in Project Properties, Data Sources, “Identifiable”';
  if (all) {
    const which = layers.length === 1 ? `layer ${named} is not` : `none of ${named} is`;
    return (
      <p class="muted" role="status">
        Nothing can be queried here: {which} identifiable in this project ({where}).
      </p>
    );
  }
  return (
    <>
      {found === 0 && (
        <p class="muted" role="status">
          No feature of the layers shown is at this point.
        </p>
      )}
      {layers.length > 0 && (
        <p class="muted">
          Not queried: {named}, not identifiable in this project ({where}).
        </p>
      )}
    </>
  );
}

export function FeatureInfo(props: {
  project: ProjectRef;
  /** The layers queried, bottom first, each drawn in its current style. */
  layers: string[];
  query: MapQuery;
  onClose: () => void;
  /** The role the features are found as (view-as.tsx); undefined for the viewer's own. */
  viewAs?: string | undefined;
}): JSX.Element {
  const { project, query } = props;
  const heading = useRef<HTMLHeadingElement>(null);
  const found = useApi(
    (signal) =>
      api.get('/api/projects/{project}/feature-info', {
        path: { project: project.project },
        query: {
          ...schemaQuery(project),
          layers: props.layers.join(','),
          crs: query.crs,
          bbox: query.bbox.join(','),
          width: String(query.width),
          height: String(query.height),
          i: String(query.i),
          j: String(query.j),
          ...(props.viewAs === undefined ? {} : { view_as: props.viewAs }),
        },
        signal,
      }),
    [project.project, project.schema, query, props.viewAs],
  );
  const close = useRef(props.onClose);
  close.current = props.onClose;
  useEffect(() => heading.current?.focus(), [query]);
  useEffect(() => {
    const escape = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') close.current();
    };
    document.addEventListener('keydown', escape);
    return () => document.removeEventListener('keydown', escape);
  }, []);
  const features = found.data?.features;
  const unqueried = found.data?.not_identifiable ?? [];
  return (
    <section class="card feature-info" aria-labelledby="feature-info-title">
      <div class="page-head">
        <h2 id="feature-info-title" tabIndex={-1} ref={heading}>
          Features here
        </h2>
        <button type="button" onClick={props.onClose} aria-label="Close the features (Escape)">
          Close
        </button>
      </div>
      {found.loading && <Loading what="the features here" />}
      <ErrorMessage error={found.error} />
      {!found.loading && found.data && (
        <Unqueried layers={unqueried} all={unqueried.length === props.layers.length} found={features?.length ?? 0} />
      )}
      {!found.loading &&
        features?.map((feature) => <FeatureTable key={`${feature.layer}.${feature.id}`} feature={feature} />)}
    </section>
  );
}
