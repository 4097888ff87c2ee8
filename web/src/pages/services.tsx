/**
 * What QGIS Server publishes of a project (docs/organizing-projects.md): the settings by service,
 * and the URL of each service's capabilities to give to a client, on the public address, or said
 * to be internal when the server has none.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { loadLayers } from '../api/layers';
import { projectRef, schemaQuery } from '../api/projects';
import type { ServicesAnswer } from '../api/service-settings';
import { groupNames } from '../api/tree-edits';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { ProjectTabs } from '../components/project-tabs';
import { ServicesForm } from '../components/services-form';
import { useMayWrite } from '../components/use-access';
import { useApi } from '../components/use-api';
import type { PageProps } from '../routes';

const ENDPOINTS = [
  ['wms', 'WMS GetCapabilities'],
  ['wfs', 'WFS GetCapabilities'],
  ['wcs', 'WCS GetCapabilities'],
  ['wmts', 'WMTS GetCapabilities'],
  ['ogcapi_features', 'OGC API Features landing page'],
] as const;

/** Which address the URLs are on: the internal one is said, with how to give the public one. */
function AddressNote({ address }: { address: ServicesAnswer['endpoints']['address'] }): JSX.Element {
  if (address === 'public')
    return <p class="muted">The address clients reach QGIS Server at (STEWARD_PUBLIC_OWS_URL).</p>;
  return (
    <p class="notice" id="endpoints-internal">
      These URLs are on QGIS Server’s internal address (STEWARD_QGISSERVER_URL), which clients on other machines may not
      reach. Set STEWARD_PUBLIC_OWS_URL to the address they use (nginx’s, such as https://maps.example.org/ows/) and
      restart Steward, or give a service its own advertised URL below.
    </p>
  );
}

function Endpoints({ endpoints }: { endpoints: ServicesAnswer['endpoints'] }): JSX.Element {
  const [copied, setCopied] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const copy = (name: string, url: string): void => {
    setFailure(undefined);
    navigator.clipboard.writeText(url).then(
      () => setCopied(name),
      () => setFailure(`The browser did not let the console copy the ${name} URL: select it and copy it by hand.`),
    );
  };
  return (
    <section class="card" aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Service URLs</h2>
      <AddressNote address={endpoints.address} />
      <dl class="endpoints">
        {ENDPOINTS.map(([key, name]) => (
          <div key={key}>
            <dt>{name}</dt>
            <dd>
              <a href={endpoints[key]} target="_blank" rel="noreferrer">
                <code>{endpoints[key]}</code>
              </a>{' '}
              <button type="button" onClick={() => copy(name, endpoints[key])} aria-label={`Copy the ${name} URL`}>
                Copy
              </button>
            </dd>
          </div>
        ))}
      </dl>
      <ErrorMessage error={failure} />
      {copied && (
        <p role="status" class="muted">
          The {copied} URL was copied.
        </p>
      )}
    </section>
  );
}

export default function ServicesPage({ params, query }: PageProps): JSX.Element {
  const ref = projectRef(params, query);
  const loaded = useApi(
    (signal) =>
      api.get('/api/projects/{project}/services', { path: { project: ref.project }, query: schemaQuery(ref), signal }),
    [ref.project, ref.schema],
  );
  const layers = useApi((signal) => loadLayers(ref, signal), [ref.project, ref.schema]);
  const tree = useApi(
    (signal) =>
      api.get('/api/projects/{project}/tree', { path: { project: ref.project }, query: schemaQuery(ref), signal }),
    [ref.project, ref.schema],
  );
  const [saved, setSaved] = useState<ServicesAnswer | undefined>(undefined);
  const current = saved ?? loaded.data;
  const mayWrite = useMayWrite(ref);
  return (
    <Page title={`${ref.project}: services`}>
      <ProjectTabs project={ref} current="/services" />
      <ErrorMessage error={loaded.error ?? layers.error ?? tree.error} />
      {current === undefined || layers.data === undefined || tree.data === undefined ? (
        !loaded.error && !layers.error && !tree.error && <Loading what="the service settings" />
      ) : (
        <div class="services">
          <Endpoints endpoints={current.endpoints} />
          {mayWrite && (
            <ServicesForm
              project={ref}
              start={current}
              layers={layers.data}
              groups={groupNames(tree.data.children)}
              onSaved={setSaved}
            />
          )}
        </div>
      )}
    </Page>
  );
}
