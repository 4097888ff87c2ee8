/**
 * What a project's map draws under its layers: nothing, or a graticule of meridians and parallels
 * drawn in the browser. The console fetches nothing from outside Steward (and the server may reach
 * no tile server), so the basemap is made here. The choice is kept in the browser, for every map.
 */
import type BaseLayer from 'ol/layer/Base';
import Stroke from 'ol/style/Stroke';

export type Basemap = 'none' | 'graticule';

const KEY = 'steward.basemap';

export function storedBasemap(): Basemap {
  return localStorage.getItem(KEY) === 'graticule' ? 'graticule' : 'none';
}

export function storeBasemap(basemap: Basemap): void {
  if (basemap === 'none') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, basemap);
}

/**
 * The layer drawing `basemap`, undefined for none. The graticule brings OpenLayers' vector
 * rendering (28 KB gzipped), fetched only once a map shows it; its stroke style is in every map
 * already.
 */
export async function basemapLayer(basemap: Basemap): Promise<BaseLayer | undefined> {
  if (basemap === 'none') return undefined;
  const { default: Graticule } = await import('ol/layer/Graticule');
  return new Graticule({
    strokeStyle: new Stroke({ color: 'rgba(40, 70, 120, 0.55)', width: 1 }),
    showLabels: true,
    wrapX: false,
  });
}
