/**
 * A vector layer's attribute table, 50 rows a page, as QGIS Server's WFS serves it
 * (`GET .../layers/{layer}/features`); a layer WFS does not publish links to the Services tab.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api, ApiError } from '../api/client';
import { projectPath, type ProjectRef, schemaQuery } from '../api/projects';
import { Link } from '../router';
import { Dialog } from './dialog';
import { valueText } from './feature-info';
import { ErrorMessage, Loading } from './messages';
import { Pager } from './pager';
import { useApi } from './use-api';

const PAGE_ROWS = 50;

/** The attribute names of a page's features, in their first feature's order. */
function columnsOf(features: Array<{ properties: Record<string, unknown> }>): string[] {
  const names = new Set<string>();
  for (const feature of features) for (const name of Object.keys(feature.properties)) names.add(name);
  return [...names];
}

export function AttributeTable(props: { project: ProjectRef; layer: string; onClose: () => void }): JSX.Element {
  const { project, layer } = props;
  const [start, setStart] = useState(0);
  const page = useApi(
    (signal) =>
      api.get('/api/projects/{project}/layers/{layer}/features', {
        path: { project: project.project, layer },
        query: { ...schemaQuery(project), start: String(start), count: String(PAGE_ROWS) },
        signal,
      }),
    [project.project, project.schema, layer, start],
  );
  const unpublished = page.error instanceof ApiError && page.error.status === 409;
  const features = page.data?.features ?? [];
  const columns = columnsOf(features);
  return (
    <Dialog title={`Attributes of ${layer}`} open onClose={props.onClose}>
      {page.data === undefined && page.loading && <Loading what="the features" />}
      <ErrorMessage error={page.error} />
      {unpublished && (
        <p>
          The table is read through WFS: publish {layer} by WFS on the{' '}
          <Link href={projectPath(project, '/services')}>Services tab</Link>, then open it again.
        </p>
      )}
      {page.data && (
        <>
          <Pager
            what="Features"
            total={page.data.total}
            offset={page.data.start}
            limit={PAGE_ROWS}
            shown={features.length}
            onOffset={setStart}
          />
          <div class="table-scroll" tabIndex={0} role="region" aria-label={`Attribute table of ${layer}`}>
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">id</th>
                  {columns.map((name) => (
                    <th key={name} scope="col">
                      {name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {features.map((feature) => (
                  <tr key={feature.id}>
                    <td>{feature.id}</td>
                    {columns.map((name) => (
                      <td key={name}>{valueText(feature.properties[name])}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <div class="dialog-actions">
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
