import { BadRequest, Unprocessable } from '../errors.js';
import { type CrsResolver } from '../gdal/crs.js';
import { normaliseAuthid } from '../qgis/crs.js';
import { type TreeNode } from '../qgis/layer-tree.js';
import { type LayerEntry, type ProjectDocument } from '../qgis/project.js';
import {
  FIXED_WMTS_GRIDS,
  type ServicesChange,
  type ServiceSettings,
  type WfsSettings,
  type WmtsGrid,
} from '../qgis/project-services.js';
import { type ProjectRef } from '../storage/project-store.js';
import { checkText } from './names.js';
import { type ProjectRepository } from './repository.js';
import { type ServiceEndpoints, serviceEndpoints } from './service-endpoints.js';

/** The settings and where a client reaches each service. */
export type ServicesAnswer = ServiceSettings & { endpoints: ServiceEndpoints };

/** Told when the names QGIS Server publishes the layers under may have changed (the tile cache). */
/** Where clients reach QGIS Server: a project's URL there (with its MAP), and whether that address is the public one. */
export interface OwsAddress {
  projectUrl(ref: ProjectRef): Promise<URL>;
  address: ServiceEndpoints['address'];
}

export interface PublishedNamesListener {
  publishedNamesChanged(ref: ProjectRef): Promise<void>;
}

/** A grid as requested: QGIS Server's fixed grids need only their CRS and last level. */
export type GridRequest = Pick<WmtsGrid, 'crs' | 'last_level'> & Partial<WmtsGrid>;

/** The settings a request gives, the WFS's and WCS's `enabled` included. */
export type ServicesRequest = Omit<ServicesChange, 'wfs' | 'wcs' | 'wmts'> & {
  wfs?: NonNullable<ServicesChange['wfs']> & { enabled?: boolean };
  wcs?: NonNullable<ServicesChange['wcs']> & { enabled?: boolean };
  wmts?: Omit<NonNullable<ServicesChange['wmts']>, 'grids'> & { enabled?: boolean; grids?: GridRequest[] | null };
};

function groupNames(nodes: readonly TreeNode[], found: Set<string> = new Set()): Set<string> {
  for (const node of nodes) {
    if (node.type !== 'group') continue;
    found.add(node.name);
    groupNames(node.children, found);
  }
  return found;
}

/** A service's advertised URL: empty (the address asked at) or an http(s) URL clients can be sent to. */
function checkAdvertisedUrl(service: string, url: string | undefined): void {
  if (url === undefined || url === '') return;
  const protocol = URL.canParse(url) ? new URL(url).protocol : undefined;
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new BadRequest(`${service} url must be an http:// or https:// URL, or empty, not "${url}"`);
}

function checkTexts(request: ServicesRequest): void {
  const texts: Array<[string, string | undefined]> = [
    ['title', request.title],
    ['abstract', request.abstract],
    ['online_resource', request.online_resource],
    ['fees', request.fees],
    ['access_constraints', request.access_constraints],
    ...Object.entries(request.contact ?? {}).map(([field, value]): [string, string] => [`contact ${field}`, value]),
    ...(request.keywords ?? []).map((keyword): [string, string] => ['keyword', keyword]),
    ['wms url', request.wms?.url],
    ['wfs url', request.wfs?.url],
    ['wcs url', request.wcs?.url],
    ['wmts url', request.wmts?.url],
  ];
  for (const [field, value] of texts) if (value !== undefined) checkText(field, value);
  for (const service of ['wms', 'wfs', 'wcs', 'wmts'] as const) checkAdvertisedUrl(service, request[service]?.url);
  const extent = request.wms?.extent;
  if (extent && !(extent[0] < extent[2] && extent[1] < extent[3]))
    throw new BadRequest('wms extent must be [xmin, ymin, xmax, ymax] with xmin < xmax and ymin < ymax');
}

/** Checks a request against the project: its layers exist and are of the kind the service publishes. */
class RequestCheck {
  // Each name is looked up in the document's index: a change naming no layer reads none of a large project's.
  constructor(
    private readonly document: ProjectDocument,
    private readonly project: string,
  ) {}

  layersOf(service: string, names: readonly string[] | undefined, type?: LayerEntry['type']): void {
    for (const name of names ?? []) {
      const entry = this.document.layer(name);
      if (!entry) throw new Unprocessable(`${service}: project "${this.project}" has no layer "${name}"`);
      if (type && entry.type !== type)
        throw new Unprocessable(
          `${service}: layer "${name}" is a ${entry.type} layer; ${service} publishes ${type} layers`,
        );
    }
  }
}

/** The WFS change in full: transactions only on published layers, as Desktop unchecks them with the layer. */
function wfsChange(request: NonNullable<ServicesRequest['wfs']>, current: WfsSettings): ServicesChange['wfs'] {
  const { enabled, ...change } = request;
  if (enabled === false) {
    if ((change.layers ?? []).length > 0) throw new BadRequest('wfs: enabled false publishes no layer');
    change.layers = [];
  }
  const layers = change.layers ?? current.layers;
  const published = new Set(layers);
  for (const operation of ['insert', 'update', 'delete'] as const) {
    const given = change[operation];
    const unpublished = given?.filter((name) => !published.has(name)) ?? [];
    if (unpublished.length > 0)
      throw new Unprocessable(`wfs ${operation}: ${unpublished.join(', ')} not published by WFS (wfs layers)`);
    change[operation] = (given ?? current[operation]).filter((name) => published.has(name));
  }
  const precision = Object.keys(change.precision ?? {}).filter((name) => !published.has(name));
  if (precision.length > 0) throw new Unprocessable(`wfs precision: ${precision.join(', ')} not published by WFS`);
  return change;
}

/** A project's OWS service settings: what QGIS Server publishes, and how (project-services.ts of src/qgis). */
export class ProjectServicesService {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly crs: CrsResolver,
    private readonly ows: OwsAddress,
    private readonly names?: PublishedNamesListener,
  ) {}

  async settings(ref: ProjectRef): Promise<ServicesAnswer> {
    return this.answer(ref, (await this.repository.read(ref)).services());
  }

  private async answer(ref: ProjectRef, settings: ServiceSettings): Promise<ServicesAnswer> {
    return { ...settings, endpoints: serviceEndpoints(await this.ows.projectUrl(ref), this.ows.address, settings) };
  }

  private crsList(values: readonly string[], field = 'wms crs'): string[] {
    return values.map((value) => {
      const authid = normaliseAuthid(value);
      if (authid === undefined || !this.crs.fromAuthid(authid))
        throw new Unprocessable(`${field}: "${value}" is not a known EPSG code`);
      return authid;
    });
  }

  /**
   * The grids complete: a fixed grid's corner and scale are QGIS Server's, any other's are
   * required; null (QGIS Server's own) as it is.
   */
  private grids(requested: readonly GridRequest[] | null): WmtsGrid[] | null {
    if (requested === null) return null;
    const codes = this.crsList(
      requested.map((grid) => grid.crs),
      'wmts grids',
    );
    if (new Set(codes).size < codes.length) throw new Unprocessable('wmts grids: one grid per CRS');
    return requested.map((grid, index) => {
      const crs = codes[index] as string;
      const complete = { ...grid, ...FIXED_WMTS_GRIDS[crs], crs };
      const { top, left, scale_denominator } = complete;
      if (top === undefined || left === undefined || scale_denominator === undefined)
        throw new Unprocessable(`wmts grids: ${crs} needs its top, left and scale_denominator`);
      return { crs, top, left, scale_denominator, last_level: grid.last_level };
    });
  }

  private change(document: ProjectDocument, ref: ProjectRef, request: ServicesRequest): ServicesChange {
    const check = new RequestCheck(document, ref.name);
    const current = document.services();
    const { wfs, wcs, wmts, ...rest } = request;
    const change: ServicesChange = { ...rest };
    if (request.wms) {
      change.wms = { ...request.wms };
      if (request.wms.crs) change.wms.crs = this.crsList(request.wms.crs);
    }
    if (wfs) {
      check.layersOf('wfs', wfs.layers, 'vector');
      change.wfs = wfsChange(wfs, current.wfs);
    }
    if (wcs) {
      const { enabled, ...rasters } = wcs;
      check.layersOf('wcs', rasters.layers, 'raster');
      change.wcs = enabled === false ? { ...rasters, layers: [] } : rasters;
    }
    if (wmts) {
      const { enabled, ...tiles } = wmts;
      check.layersOf('wmts', tiles.layers);
      const groups = groupNames(document.layerTreeOf().children);
      const unknown = (tiles.groups ?? []).filter((name) => !groups.has(name));
      if (unknown.length > 0) throw new Unprocessable(`wmts: project "${ref.name}" has no group ${unknown.join(', ')}`);
      const published = new Set([
        '',
        ...(tiles.groups ?? current.wmts.groups),
        ...(tiles.layers ?? current.wmts.layers),
      ]);
      const stray = Object.keys(tiles.formats ?? {}).filter((name) => !published.has(name));
      if (stray.length > 0) throw new Unprocessable(`wmts formats: ${stray.join(', ')} not published by WMTS`);
      const { grids, ...layersAndFormats } = tiles;
      const written = grids === undefined ? layersAndFormats : { ...layersAndFormats, grids: this.grids(grids) };
      change.wmts = enabled === false ? { ...written, project: false, groups: [], layers: [] } : written;
    }
    return change;
  }

  /** Changes the settings given, as Desktop's Project Properties > QGIS Server writes them. */
  async update(ref: ProjectRef, request: ServicesRequest): Promise<ServicesAnswer> {
    checkTexts(request);
    const changed = Object.keys(request).join(', ');
    const settings = await this.repository.update(
      ref,
      (document) => {
        document.changeServices(this.change(document, ref, request));
        return document.services();
      },
      [],
      `changed the service settings (${changed})`,
    );
    if (request.wms?.use_layer_ids !== undefined) await this.names?.publishedNamesChanged(ref);
    return this.answer(ref, settings);
  }
}
