/**
 * STEWARD_CONSOLE_BASEMAPS: the tile or map services an operator offers the console's maps as
 * basemaps, under the project's layers, besides the graticule the browser draws itself. A JSON
 * array of `{"name", "type": "xyz" | "wms", "url", "layers" (wms), "attribution"}`. The browser
 * fetches them, not Steward: their origins join the console's image policy, and nothing else does.
 */
type Env = Readonly<Record<string, string | undefined>>;

export interface BasemapSetting {
  name: string;
  /** xyz: a tile URL template with `{z}`, `{x}` and `{y}`; wms: a WMS endpoint asked for GetMap. */
  type: 'xyz' | 'wms';
  url: string;
  /** The WMS layers drawn, comma-separated. */
  layers?: string;
  /** Said under the map while it is shown, as the service's terms ask. */
  attribution?: string;
}

const VARIABLE = 'STEWARD_CONSOLE_BASEMAPS';
const MAX_BASEMAPS = 20;
const MAX_TEXT = 300;

class BasemapSettingError extends Error {}

function text(entry: Record<string, unknown>, key: string, index: number, required: boolean): string | undefined {
  const value = entry[key];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_TEXT)
    throw new BasemapSettingError(`basemap ${index + 1} needs "${key}", a text of 1 to ${MAX_TEXT} characters`);
  return value.trim();
}

function basemap(entry: unknown, index: number): BasemapSetting {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    throw new BasemapSettingError(`basemap ${index + 1} must be an object`);
  const fields = entry as Record<string, unknown>;
  const name = text(fields, 'name', index, true) as string;
  const type = fields['type'];
  if (type !== 'xyz' && type !== 'wms') throw new BasemapSettingError(`basemap "${name}" needs "type": "xyz" or "wms"`);
  const url = text(fields, 'url', index, true) as string;
  const probe = url.replace(/\{[xyz]\}/g, '0');
  if (!URL.canParse(probe) || !['http:', 'https:'].includes(new URL(probe).protocol))
    throw new BasemapSettingError(`basemap "${name}" needs an http(s) "url", not "${url}"`);
  if (type === 'xyz' && !['{x}', '{y}', '{z}'].every((part) => url.includes(part)))
    throw new BasemapSettingError(`basemap "${name}" is xyz: its "url" needs {z}, {x} and {y}`);
  const layers = text(fields, 'layers', index, type === 'wms');
  const attribution = text(fields, 'attribution', index, false);
  return {
    name,
    type,
    url,
    ...(type === 'wms' && layers !== undefined && { layers }),
    ...(attribution !== undefined && { attribution }),
  };
}

/** The basemaps STEWARD_CONSOLE_BASEMAPS offers; none when unset. Throws `makeError(message)` when it is wrong. */
export function readBasemaps(env: Env, makeError: (message: string) => Error): BasemapSetting[] {
  const value = env[VARIABLE]?.trim();
  if (value === undefined || value === '') return [];
  try {
    let list: unknown;
    try {
      list = JSON.parse(value);
    } catch {
      throw new BasemapSettingError('it is not JSON');
    }
    if (!Array.isArray(list) || list.length > MAX_BASEMAPS)
      throw new BasemapSettingError(`it must be a JSON array of at most ${MAX_BASEMAPS} basemaps`);
    const basemaps = list.map(basemap);
    const names = basemaps.map((each) => each.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined) throw new BasemapSettingError(`two basemaps are named "${twice}"`);
    return basemaps;
  } catch (error) {
    if (error instanceof BasemapSettingError) throw makeError(`${VARIABLE}: ${error.message}`);
    throw error;
  }
}

/** The origins the console's pages may load basemap images from. */
export function basemapOrigins(basemaps: readonly BasemapSetting[]): string[] {
  return [...new Set(basemaps.map((each) => new URL(each.url.replace(/\{[xyz]\}/g, '0')).origin))];
}
