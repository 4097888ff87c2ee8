/**
 * A project's features as QGIS Server answers for them: those under a pixel of a map view
 * (WMS GetFeatureInfo) and a layer's features a page at a time (WFS GetFeature), both as GeoJSON.
 */
import { BadGateway, Conflict } from '../errors.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type QgisParams } from '../transport/qgis-get.js';
import { type LayerService } from './layers.js';
import { bytes, type MapService, type MapView } from './maps.js';
import { type ProjectServicesService } from './project-services.js';

/** Attribute values as QGIS Server writes them in GeoJSON. */
export type Attributes = Record<string, unknown>;

export interface FoundFeature {
  /** The layer's name in the project (not the name QGIS Server publishes it under). */
  layer: string;
  id: string;
  properties: Attributes;
}

export interface FeaturesAt {
  features: FoundFeature[];
  /** The layers of the view QGIS does not identify, left out of the query. */
  notIdentifiable: string[];
}

export interface FeaturePage {
  /** Features of the layer in all. */
  total: number;
  start: number;
  features: Array<{ id: string; properties: Attributes }>;
}

/** Features GetFeatureInfo answers at most, over all the layers queried. */
const INFO_FEATURES = 20;
/** How near a click must be to a point or a line, in pixels, for it to be found. */
const INFO_TOLERANCE = '8';

interface GeoJsonFeature {
  id?: string | number;
  properties?: unknown;
}

/** The features of a GeoJSON collection; a 502 when QGIS Server answered something else. */
function featuresOf(body: Buffer, what: string): GeoJsonFeature[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const features = (parsed as { features?: unknown } | undefined)?.features;
  if (!Array.isArray(features)) {
    const failed = `QGIS Server could not answer ${what}`;
    const detail = body.toString('utf8').replace(/\s+/g, ' ').slice(0, 500);
    throw new BadGateway(`${failed}: ${detail}`, { clientMessage: `${failed}; its answer is in Steward's log` });
  }
  return features as GeoJsonFeature[];
}

function propertiesOf(feature: GeoJsonFeature): Attributes {
  const { properties } = feature;
  return typeof properties === 'object' && properties !== null ? (properties as Attributes) : {};
}

/** WFS names a layer by its WMS name with its spaces made underscores (QGIS Server's layerTypeName). */
function typeName(wmsName: string): string {
  return wmsName.replaceAll(' ', '_');
}

export class FeatureQueries {
  constructor(
    private readonly maps: MapService,
    private readonly layers: LayerService,
    private readonly services: ProjectServicesService,
  ) {}

  /**
   * The features of the view's identifiable layers under pixel (`i`, `j`), each with its layer's
   * name, and the layers of the view QGIS does not identify (it refuses to query them): with none
   * identifiable, QGIS Server is not asked.
   */
  async at(ref: ProjectRef, view: MapView, i: number, j: number, params: QgisParams): Promise<FeaturesAt> {
    const published = await Promise.all(view.layers.map((name) => this.layers.published(ref, name)));
    const queried = published.filter((layer) => layer.identifiable);
    const notIdentifiable = published.filter((layer) => !layer.identifiable).map((layer) => layer.name);
    if (queried.length === 0) return { features: [], notIdentifiable };
    const url = new URL(
      await this.maps.viewUrl(ref, view, {
        REQUEST: 'GetFeatureInfo',
        QUERY_LAYERS: queried.map((layer) => layer.wmsName).join(','),
        INFO_FORMAT: 'application/json',
        FEATURE_COUNT: String(INFO_FEATURES),
        I: String(i),
        J: String(j),
        FI_POINT_TOLERANCE: INFO_TOLERANCE,
        FI_LINE_TOLERANCE: INFO_TOLERANCE,
      }),
    );
    const answer = await this.maps.ask(url.toString(), params);
    const features = featuresOf(await bytes(answer.body), 'GetFeatureInfo');
    // QGIS Server's ids are `<published name>.<feature id>`; the longest published name that fits wins.
    const byLength = [...queried].sort((a, b) => b.wmsName.length - a.wmsName.length);
    return {
      features: features.map((feature) => {
        const id = String(feature.id ?? '');
        const layer = byLength.find((entry) => id.startsWith(`${entry.wmsName}.`));
        return {
          layer: layer?.name ?? '',
          id: layer ? id.slice(layer.wmsName.length + 1) : id,
          properties: propertiesOf(feature),
        };
      }),
      notIdentifiable,
    };
  }

  /** Features `start` to `start + count - 1` of a vector layer WFS publishes; 409 for one it does not. */
  async page(ref: ProjectRef, name: string, start: number, count: number, params: QgisParams): Promise<FeaturePage> {
    const layer = await this.layers.published(ref, name);
    const settings = await this.services.settings(ref);
    if (!settings.wfs.layers.includes(name)) {
      throw new Conflict(
        `layer "${name}" is not published by WFS: publish it in the project's services (wfs layers) to read its features`,
      );
    }
    const ask = async (extra: Record<string, string>): Promise<Buffer> => {
      const url = await this.maps.projectUrl(ref);
      const parameters = { SERVICE: 'WFS', VERSION: '1.1.0', REQUEST: 'GetFeature', TYPENAME: typeName(layer.wmsName) };
      for (const [key, value] of Object.entries({ ...parameters, ...extra })) url.searchParams.set(key, value);
      return bytes((await this.maps.ask(url.toString(), params)).body);
    };
    const [hits, features] = await Promise.all([
      ask({ RESULTTYPE: 'hits' }),
      ask({ OUTPUTFORMAT: 'application/json', STARTINDEX: String(start), MAXFEATURES: String(count) }),
    ]);
    const total = /numberOfFeatures="(\d+)"/.exec(hits.toString('utf8'))?.[1];
    if (total === undefined) {
      throw new BadGateway(
        `QGIS Server did not count the features of "${name}": ${hits.toString('utf8').slice(0, 500)}`,
        {
          clientMessage: `QGIS Server did not count the features of "${name}"; its answer is in Steward's log`,
        },
      );
    }
    return {
      total: Number(total),
      start,
      features: featuresOf(features, `WFS GetFeature for "${name}"`).map((feature) => ({
        id: String(feature.id ?? '').replace(`${typeName(layer.wmsName)}.`, ''),
        properties: propertiesOf(feature),
      })),
    };
  }
}
