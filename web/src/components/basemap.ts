/**
 * What a project's map draws under its layers: nothing, a graticule of meridians and parallels
 * drawn in the browser, or one of the tile or map services the operator offers
 * (STEWARD_CONSOLE_BASEMAPS, listed by `GET /api/server`), which the browser fetches itself. The
 * choice is kept in the browser, for every map.
 */
import type BaseLayer from 'ol/layer/Base';
import ImageLayer from 'ol/layer/Image';
import Stroke from 'ol/style/Stroke';

import { type Answer } from '../api/client';

/** A basemap the operator offers. */
export type OfferedBasemap = Answer<'/api/server'>['basemaps'][number];

/** What is drawn under the layers. */
export type Basemap = { kind: 'none' } | { kind: 'graticule' } | { kind: 'offered'; offered: OfferedBasemap };

/** The stored choice: `none`, `graticule`, or `offered:<name>`. */
export type BasemapKey = string;

const KEY = 'steward.basemap';

export function storedBasemapKey(): BasemapKey {
  return localStorage.getItem(KEY) ?? 'none';
}

export function storeBasemapKey(key: BasemapKey): void {
  if (key === 'none') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, key);
}

export const offeredKey = (offered: OfferedBasemap): BasemapKey => `offered:${offered.name}`;

/** The basemap `key` names among those `offered`; none for one no longer offered. */
export function basemapOf(key: BasemapKey, offered: readonly OfferedBasemap[]): Basemap {
  if (key === 'graticule') return { kind: 'graticule' };
  const named = offered.find((each) => offeredKey(each) === key);
  return named ? { kind: 'offered', offered: named } : { kind: 'none' };
}

export const basemapKey = (basemap: Basemap): BasemapKey =>
  basemap.kind === 'offered' ? offeredKey(basemap.offered) : basemap.kind;

/**
 * The layer drawing `basemap`, undefined for none. Each kind's OpenLayers code (the graticule's
 * vector rendering is 28 KB gzipped) is fetched only once a map shows it.
 */
export async function basemapLayer(basemap: Basemap): Promise<BaseLayer | undefined> {
  if (basemap.kind === 'none') return undefined;
  if (basemap.kind === 'graticule') {
    const { default: Graticule } = await import('ol/layer/Graticule');
    return new Graticule({
      strokeStyle: new Stroke({ color: 'rgba(40, 70, 120, 0.55)', width: 1 }),
      showLabels: true,
      wrapX: false,
    });
  }
  const { offered } = basemap;
  const attributions = offered.attribution;
  if (offered.type === 'xyz') {
    const [{ default: TileLayer }, { default: XYZ }] = await Promise.all([
      import('ol/layer/Tile'),
      import('ol/source/XYZ'),
    ]);
    return new TileLayer({ source: new XYZ({ url: offered.url, ...(attributions && { attributions }) }) });
  }
  // The image layer is in every map already: the WMS source alone is fetched.
  const { default: ImageWMS } = await import('ol/source/ImageWMS');
  return new ImageLayer({
    source: new ImageWMS({
      url: offered.url,
      params: { LAYERS: offered.layers ?? '', FORMAT: 'image/png', VERSION: '1.3.0' },
      ...(attributions && { attributions }),
    }),
  });
}
