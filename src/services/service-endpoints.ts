/**
 * Where a client reaches a project's services: each one's GetCapabilities and the OGC API Features
 * landing page, on the URL the service advertises when it has one, else on QGIS Server's public
 * address (STEWARD_PUBLIC_OWS_URL), else on the internal one Steward itself uses.
 */
import { type ServiceSettings } from '../qgis/project-services.js';

export interface ServiceEndpoints {
  wms: string;
  wfs: string;
  wcs: string;
  wmts: string;
  ogcapi_features: string;
  /** Whether the URLs are on the public address, or (unset) on the internal one. */
  address: 'public' | 'internal';
}

const VERSIONS = { wms: '1.3.0', wfs: '1.1.0', wcs: '1.0.0', wmts: '1.0.0' } as const;

function capabilities(base: URL, advertised: string, service: keyof typeof VERSIONS): string {
  const url = advertised === '' ? new URL(base) : new URL(advertised, base);
  url.searchParams.set('SERVICE', service.toUpperCase());
  url.searchParams.set('VERSION', VERSIONS[service]);
  url.searchParams.set('REQUEST', 'GetCapabilities');
  return url.href;
}

/** The URLs of the project's services; `projectUrl` is QGIS Server's, public or internal, with the project's MAP. */
export function serviceEndpoints(
  projectUrl: URL,
  address: ServiceEndpoints['address'],
  settings: ServiceSettings,
): ServiceEndpoints {
  const landing = new URL('wfs3', projectUrl);
  landing.search = projectUrl.search;
  return {
    wms: capabilities(projectUrl, settings.wms.url, 'wms'),
    wfs: capabilities(projectUrl, settings.wfs.url, 'wfs'),
    wcs: capabilities(projectUrl, settings.wcs.url, 'wcs'),
    wmts: capabilities(projectUrl, settings.wmts.url, 'wmts'),
    ogcapi_features: landing.href,
    address,
  };
}
