import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

import { catalogueDir } from '../../checkout.js';
import { NotFound } from '../../errors.js';

/** The description endpoints, as `/api/symbology/<endpoint>/properties`. */
export const SYMBOLOGY_ENDPOINTS = [
  'vector/point/single_symbol/marker',
  'vector/line/single_symbol/line',
  'vector/polygon/single_symbol/fill',
  'vector/rendering',
  'raster/singlebandgray',
  'raster/multibandcolor',
  'raster/singlebandpseudocolor',
  'raster/rendering',
] as const;
export type SymbologyEndpoint = (typeof SYMBOLOGY_ENDPOINTS)[number];

export type SymbolKind = 'marker' | 'line' | 'fill';

const Description = Type.Recursive((This) =>
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), This])),
);
export type Description = Static<typeof Description>;

const SymbolLayerProperty = Type.Object({
  default: Type.String(),
  values: Type.Optional(Type.Array(Type.String())),
  colour: Type.Optional(Type.Boolean()),
});
export type SymbolLayerProperty = Static<typeof SymbolLayerProperty>;

const SymbolLayer = Type.Object({
  /** QGIS's symbol layer class name: SimpleMarker, SimpleLine, SimpleFill. */
  class: Type.String(),
  symbol: Type.Union([Type.Literal('marker'), Type.Literal('line'), Type.Literal('fill')]),
  /** QgsWkbTypes::GeometryType written as `layerGeometryType` in a vector QML. */
  geometry_type: Type.Integer(),
  properties: Type.Record(Type.String(), SymbolLayerProperty),
});
export type SymbolLayer = Static<typeof SymbolLayer>;

const Enhancement = Type.Object({ algorithm: Type.String(), limits_min_max: Type.String() });
const RasterRenderer = Type.Object({
  bands: Type.Record(Type.String(), Type.Integer()),
  contrast_enhancement: Enhancement,
});
export type RasterRendererDefaults = Static<typeof RasterRenderer>;

const CatalogueFile = Type.Object({
  qgis_version: Type.String(),
  endpoints: Type.Object(Object.fromEntries(SYMBOLOGY_ENDPOINTS.map((endpoint) => [endpoint, Description]))),
  ramps: Type.Record(Type.String(), Type.Record(Type.String(), Type.String())),
  symbol_layers: Type.Object({ marker: SymbolLayer, line: SymbolLayer, fill: SymbolLayer }),
  rendering: Type.Object({
    vector: Type.Object({ opacity: Type.Number() }),
    raster: Type.Object({
      brightness: Type.Number(),
      contrast: Type.Number(),
      gamma: Type.Number(),
      saturation: Type.Number(),
    }),
  }),
  raster_renderers: Type.Object({ singlebandgray: RasterRenderer, multibandcolor: RasterRenderer }),
});
type CatalogueFile = Static<typeof CatalogueFile>;
export type RasterRenderingDefaults = CatalogueFile['rendering']['raster'];

/** What QGIS of one version says about symbology: served descriptions and the style codec's defaults. */
export class SymbologyCatalogue {
  constructor(private readonly file: CatalogueFile) {}

  /** The full QGIS version the catalogue was generated with, e.g. `3.22.16-Białowieża`. */
  get qgisVersion(): string {
    return this.file.qgis_version;
  }

  description(endpoint: SymbologyEndpoint): Description {
    return this.file.endpoints[endpoint] as Description;
  }

  rampNames(): string[] {
    return Object.keys(this.file.ramps);
  }

  ramp(name: string): Description {
    const ramp = Object.hasOwn(this.file.ramps, name) ? this.file.ramps[name] : undefined;
    if (ramp === undefined) {
      throw new NotFound(`There is no colour ramp named "${name}"; known ramps: ${this.rampNames().join(', ')}.`);
    }
    return ramp;
  }

  symbolLayer(symbol: SymbolKind): SymbolLayer {
    return this.file.symbol_layers[symbol];
  }

  get vectorRendering(): { opacity: number } {
    return this.file.rendering.vector;
  }

  get rasterRendering(): RasterRenderingDefaults {
    return this.file.rendering.raster;
  }

  rasterRenderer(type: 'singlebandgray' | 'multibandcolor'): RasterRendererDefaults {
    return this.file.raster_renderers[type];
  }
}

/** `3.22.16-Białowieża` -> [3, 22]; undefined when the text holds no major.minor. */
function majorMinor(version: string): [number, number] | undefined {
  const match = /^(\d+)\.(\d+)/.exec(version);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

const FILE_NAME = /^catalogue-(\d+)\.(\d+)\.json$/;

/**
 * How the catalogue answering for a QGIS version was found: made by that very major.minor
 * (`exact`), by the nearest older one (`nearest below`), by the oldest there is for a version older
 * than all of them (`oldest`), or the newest one when the version is not known (`newest`).
 */
export type CatalogueMatch = 'exact' | 'nearest below' | 'oldest' | 'newest';

export interface CatalogueChoice {
  catalogue: SymbologyCatalogue;
  /** The major.minor of the QGIS that generated the catalogue, e.g. `3.40`. */
  catalogueVersion: string;
  match: CatalogueMatch;
}

/** Every shipped catalogue, each loaded once, and the choice of one for a QGIS version. */
export class SymbologyCatalogues {
  /** Ordered oldest first; never empty. */
  private constructor(
    private readonly shelf: ReadonlyArray<{ version: [number, number]; catalogue: SymbologyCatalogue }>,
  ) {}

  static async load(directory: string = catalogueDir()): Promise<SymbologyCatalogues> {
    const versions: Array<[number, number]> = [];
    for (const entry of await readdir(directory)) {
      const match = FILE_NAME.exec(entry);
      if (match) versions.push([Number(match[1]), Number(match[2])]);
    }
    if (versions.length === 0) throw new Error(`no symbology catalogue in ${directory}`);
    versions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const shelf = await Promise.all(
      versions.map(async (version) => ({
        version,
        catalogue: new SymbologyCatalogue(
          await readCatalogueFile(join(directory, `catalogue-${version.join('.')}.json`)),
        ),
      })),
    );
    return new SymbologyCatalogues(shelf);
  }

  /** The catalogue for a QGIS version (`3.40.6-Bratislava`), or for an unknown one (undefined). */
  select(qgisVersion: string | undefined): CatalogueChoice {
    const wanted = qgisVersion === undefined ? undefined : majorMinor(qgisVersion);
    const oldest = this.shelf[0]!;
    const newest = this.shelf[this.shelf.length - 1]!;
    if (wanted === undefined) return choice(newest, 'newest');
    const below = this.shelf.filter(
      ({ version }) => version[0] < wanted[0] || (version[0] === wanted[0] && version[1] <= wanted[1]),
    );
    const nearest = below[below.length - 1];
    if (nearest === undefined) return choice(oldest, 'oldest');
    const exact = nearest.version[0] === wanted[0] && nearest.version[1] === wanted[1];
    return choice(nearest, exact ? 'exact' : 'nearest below');
  }
}

function choice(
  entry: { version: [number, number]; catalogue: SymbologyCatalogue },
  match: CatalogueMatch,
): CatalogueChoice {
  return { catalogue: entry.catalogue, catalogueVersion: entry.version.join('.'), match };
}

async function readCatalogueFile(path: string): Promise<CatalogueFile> {
  const content: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (!Value.Check(CatalogueFile, content)) {
    const first = Value.Errors(CatalogueFile, content).First();
    throw new Error(`${path} is not a symbology catalogue: ${first?.path ?? ''} ${first?.message ?? ''}`);
  }
  return content;
}

/** The catalogue answering for a QGIS version (`3.22.16` -> catalogue-3.22.json), as `select` chooses it. */
export async function loadSymbologyCatalogue(
  qgisVersion: string,
  directory: string = catalogueDir(),
): Promise<SymbologyCatalogue> {
  return (await SymbologyCatalogues.load(directory)).select(qgisVersion).catalogue;
}
