/**
 * The project's map: OpenLayers showing one image per view, drawn by QGIS Server through
 * `GET /api/projects/{project}/wms`. The image is fetched with the API token (an <img> could not
 * send it), so the map works on a protected Steward too.
 */
import 'ol/ol.css';

import { defaults as defaultControls } from 'ol/control/defaults';
import ScaleLine from 'ol/control/ScaleLine';
import { platformModifierKeyOnly } from 'ol/events/condition';
import { extend, type Extent, getHeight, getWidth, isEmpty } from 'ol/extent';
import DragBox from 'ol/interaction/DragBox';
import type BaseLayer from 'ol/layer/Base';
import ImageLayer from 'ol/layer/Image';
import OlMap from 'ol/Map';
import { transformExtent } from 'ol/proj';
import ImageSource from 'ol/source/Image';
import View from 'ol/View';
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

import { ApiError, apiUrl, send } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { type Basemap, basemapKey, basemapLayer } from './basemap';

export interface MapLayer {
  name: string;
  visible: boolean;
  /** A style being edited, unsaved (a JSON body), to draw it with instead of its current one. */
  draft?: string | undefined;
  /** Its current style: a change draws the map again. */
  current?: string;
  /** `minx miny, maxx maxy` in `crs`, as the layer API reports it. */
  bbox: string;
  /** The same in degrees (EPSG:4326), as the layer API reports it: how a layer of another CRS is zoomed to. */
  bboxWgs84?: string | null | undefined;
  /** Changed when the style it draws with changed under the same name (an upload replaced it). */
  revision?: number;
  crs: string;
}

/** A point of the map asked about: the view shown, and the pixel of it (from its top left). */
export interface MapQuery {
  crs: string;
  bbox: Extent;
  width: number;
  height: number;
  i: number;
  j: number;
}

/** A request to show the extent of `layer`, or of every layer; `n` tells two requests apart. */
export interface ZoomRequest {
  layer?: string;
  n: number;
}

const VIEW_CRS = 'EPSG:3857';
const NO_BASEMAP: Basemap = { kind: 'none' };
/** After a failed map, it is asked again after 1 s, then 2, 4, ... up to 30 s between tries. */
const FIRST_RETRY_MS = 1000;
const LAST_RETRY_MS = 30_000;

/** The four numbers of a bbox as the layer API writes it; undefined for anything else. */
function parsedBbox(bbox: string | null | undefined): Extent | undefined {
  const numbers = (bbox ?? '').split(/[ ,]+/).map(Number);
  return numbers.length === 4 && numbers.every(Number.isFinite) ? numbers : undefined;
}

/** The layer's extent in the map's CRS: its own bbox in the map's CRS, or its bbox in degrees. */
function extentOf(layer: MapLayer): Extent | undefined {
  const own = parsedBbox(layer.bbox);
  if (own && layer.crs === VIEW_CRS) return own;
  const degrees = layer.crs === 'EPSG:4326' ? own : parsedBbox(layer.bboxWgs84);
  return degrees && transformExtent(degrees, 'EPSG:4326', VIEW_CRS);
}

/**
 * The image of a view: the layers drawn by QGIS Server (`GET .../wms`), or, while a layer's style
 * is being edited, the same view with that layer drawn in the unsaved style (`POST .../style-preview`).
 */
function viewImage(
  project: ProjectRef,
  view: Record<string, string | number | undefined>,
  visible: MapLayer[],
  viewAs: string | undefined,
): Promise<Response> {
  const drafted = visible.find((layer) => layer.draft !== undefined);
  if (!drafted?.draft)
    return send(apiUrl('/api/projects/{project}/wms', { project: project.project }, { ...view, view_as: viewAs }));
  const path = { project: project.project, layer: drafted.name };
  const url = apiUrl('/api/projects/{project}/layers/{layer}/style-preview', path, view);
  return send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: drafted.draft });
}

/** Whether the map can zoom to the layer: its extent is known in the map's CRS or in degrees, and is a box. */
export function zoomable(layer: MapLayer): boolean {
  const extent = extentOf(layer);
  return extent !== undefined && !isEmpty(extent);
}

/** The query of pixel `pixel` of the map as it is shown. */
function queryAt(olMap: OlMap, pixel: number[]): MapQuery | undefined {
  const [sizeX = 0, sizeY = 0] = olMap.getSize() ?? [];
  if (sizeX < 1 || sizeY < 1) return undefined;
  const [width, height] = [Math.round(sizeX), Math.round(sizeY)];
  const bbox = olMap.getView().calculateExtent([sizeX, sizeY]);
  const i = Math.min(width - 1, Math.max(0, Math.floor(pixel[0] ?? 0)));
  const j = Math.min(height - 1, Math.max(0, Math.floor(pixel[1] ?? 0)));
  return { crs: VIEW_CRS, bbox, width, height, i, j };
}

function unionOf(layers: MapLayer[]): Extent | undefined {
  let union: Extent | undefined;
  for (const layer of layers) {
    const extent = extentOf(layer);
    if (!extent || isEmpty(extent)) continue;
    union = union ? extend(union.slice(), extent) : extent;
  }
  return union;
}

/** An area in degrees (EPSG:4326): west, south, east, north. */
export type Area = [number, number, number, number];

/** With `onArea`, a box drawn with Ctrl (⌘ on a Mac) held down is told as an area in degrees. */
/** Ctrl-drag (⌘ on a Mac) draws a box, told to `told.current` in degrees. */
function areaPicker(told: { current: ((area: Area) => void) | undefined }): DragBox {
  const box = new DragBox({ condition: platformModifierKeyOnly });
  box.on('boxend', () => {
    const extent = transformExtent(box.getGeometry().getExtent(), VIEW_CRS, 'EPSG:4326');
    told.current?.(extent as Area);
  });
  return box;
}

/** An outline of an area in degrees over the map, kept in place as the view moves; undefined hides it. */
function areaOutline(olMap: OlMap): (area: Area | undefined) => void {
  const outline = document.createElement('div');
  outline.className = 'map-area';
  outline.setAttribute('data-testid', 'map-area');
  outline.hidden = true;
  olMap.getOverlayContainer()?.appendChild(outline);
  let extent: Extent | undefined;
  const place = (): void => {
    const [west = 0, south = 0, east = 0, north = 0] = extent ?? [];
    const topLeft = extent && olMap.getPixelFromCoordinate([west, north]);
    const bottomRight = extent && olMap.getPixelFromCoordinate([east, south]);
    outline.hidden = !topLeft || !bottomRight;
    if (!topLeft || !bottomRight) return;
    const [left = 0, top = 0] = topLeft;
    const [right = 0, bottom = 0] = bottomRight;
    Object.assign(outline.style, {
      left: `${left}px`,
      top: `${top}px`,
      width: `${right - left}px`,
      height: `${bottom - top}px`,
    });
  };
  olMap.on('postrender', place);
  return (area) => {
    extent = area && transformExtent(area, 'EPSG:4326', VIEW_CRS);
    place();
  };
}

export function ProjectMap({
  project,
  layers,
  onError,
  onAnswer,
  onQuery,
  zoom,
  onArea,
  area,
  viewAs,
  basemap = NO_BASEMAP,
}: {
  project: ProjectRef;
  layers: MapLayer[];
  onError: (error: Error | undefined) => void;
  /** QGIS Server answered for a view: an image, or an error. */
  onAnswer?: () => void;
  /** A click on the map, or Enter for its centre. */
  onQuery?: (query: MapQuery) => void;
  zoom?: ZoomRequest | undefined;
  onArea?: (area: Area) => void;
  /** An area outlined on the map, in degrees. */
  area?: Area | undefined;
  /** The role the map is drawn as (view-as.tsx); undefined for the viewer's own. */
  viewAs?: string | undefined;
  /** What is drawn under the layers. */
  basemap?: Basemap;
}): JSX.Element {
  const target = useRef<HTMLDivElement>(null);
  const map = useRef<OlMap | undefined>(undefined);
  const renew = useRef<() => void>(() => undefined);
  const drawn = useRef<MapLayer[]>(layers);
  drawn.current = layers;
  const viewing = useRef(viewAs);
  viewing.current = viewAs;
  const fitted = useRef(false);
  const errorRef = useRef(onError);
  errorRef.current = onError;
  const answerRef = useRef(onAnswer);
  answerRef.current = onAnswer;
  const queryRef = useRef(onQuery);
  queryRef.current = onQuery;
  const areaRef = useRef(onArea);
  areaRef.current = onArea;
  const outline = useRef<(area: Area | undefined) => void>(() => undefined);

  useEffect(() => {
    let retry: ReturnType<typeof setTimeout> | undefined;
    let retryMs = FIRST_RETRY_MS;
    // A source draws one view; the layers or styles changing make a new one (OpenLayers keeps an
    // image as long as the view holds it).
    const newSource = (): ImageSource =>
      new ImageSource({
        loader: async (extent: Extent, resolution: number, pixelRatio: number) => {
          const visible = drawn.current.filter((layer) => layer.visible);
          const width = Math.round(getWidth(extent) / resolution);
          const height = Math.round(getHeight(extent) / resolution);
          const canvas = document.createElement('canvas');
          if (visible.length === 0 || width < 1 || height < 1) return canvas;
          const view = {
            ...schemaQuery(project),
            layers: visible.map((layer) => layer.name).join(','),
            bbox: extent.join(','),
            crs: VIEW_CRS,
            width: Math.min(4096, Math.round(width * pixelRatio)),
            height: Math.min(4096, Math.round(height * pixelRatio)),
          };
          try {
            const image = await createImageBitmap(
              await (await viewImage(project, view, visible, viewing.current)).blob(),
            );
            retryMs = FIRST_RETRY_MS;
            errorRef.current(undefined);
            answerRef.current?.();
            return image;
          } catch (error) {
            errorRef.current(error instanceof Error ? error : new Error(String(error)));
            answerRef.current?.();
            // OpenLayers keeps the blank image for this view: a failure that may pass (a 5xx, the
            // network) draws the map again after a while, longer each time, without a pan.
            if (!(error instanceof ApiError) || error.status >= 500) {
              clearTimeout(retry);
              retry = setTimeout(() => renew.current(), retryMs);
              retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
            }
            return canvas;
          }
        },
      });
    const imageLayer = new ImageLayer({ source: newSource() });
    renew.current = () => imageLayer.setSource(newSource());
    const olMap = new OlMap({
      target: target.current ?? undefined,
      layers: [imageLayer],
      view: new View({ projection: VIEW_CRS, center: [0, 0], zoom: 2 }),
      controls: defaultControls({ attribution: false }).extend([new ScaleLine()]),
    });
    map.current = olMap;
    olMap.on('singleclick', (event) => {
      const query = queryAt(olMap, event.pixel);
      if (query) queryRef.current?.(query);
    });
    if (areaRef.current) olMap.addInteraction(areaPicker(areaRef));
    outline.current = areaOutline(olMap);
    return () => {
      clearTimeout(retry);
      olMap.setTarget(undefined);
    };
  }, [project.project, project.schema]);

  const key = `${viewAs ?? ''}#${layers
    .map((layer) => `${layer.name}:${layer.visible}:${layer.current ?? ''}:${layer.revision ?? 0}:${layer.draft ?? ''}`)
    .join('|')}`;
  useEffect(() => {
    const olMap = map.current;
    if (!olMap) return;
    if (!fitted.current) {
      const extent = unionOf(layers);
      if (extent) {
        olMap.getView().fit(extent, { padding: [24, 24, 24, 24], size: olMap.getSize() ?? [800, 480] });
        fitted.current = true;
      }
    }
    renew.current();
  }, [key]);

  useEffect(() => {
    const olMap = map.current;
    const extent = zoom && unionOf(layers.filter((layer) => zoom.layer === undefined || layer.name === zoom.layer));
    if (!olMap || !extent) return;
    olMap.getView().fit(extent, { padding: [24, 24, 24, 24], size: olMap.getSize() ?? [800, 480] });
  }, [zoom]);

  useEffect(() => outline.current(area), [area?.join(',')]);

  useEffect(() => {
    const olMap = map.current;
    let shown: BaseLayer | undefined;
    let gone = false;
    void basemapLayer(basemap).then((layer) => {
      if (gone || !olMap || !layer) return;
      shown = layer;
      olMap.getLayers().insertAt(0, layer);
    }, errorRef.current);
    return () => {
      gone = true;
      if (shown) olMap?.removeLayer(shown);
    };
  }, [basemapKey(basemap), project.project, project.schema]);

  const queryCentre = (event: KeyboardEvent): void => {
    const olMap = map.current;
    const [width = 0, height = 0] = olMap?.getSize() ?? [];
    // Enter on the zoom buttons inside the map is theirs.
    if (event.key !== 'Enter' || event.target !== event.currentTarget || !olMap) return;
    const query = queryAt(olMap, [width / 2, height / 2]);
    if (query) queryRef.current?.(query);
  };

  return (
    <div
      ref={target}
      class="map"
      role="region"
      aria-label={`Map of the project: drag to pan, use + and − to zoom${onQuery ? ', click or press Enter for the features at a point' : ''}${onArea ? ', hold Ctrl and drag to draw an area' : ''}`}
      tabIndex={0}
      onKeyDown={queryCentre}
      data-testid="project-map"
    />
  );
}
