import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { TEST_QGIS } from './qgis-runtime.js';

/**
 * Loads a configuration file with MapProxy's own loader (the tested release's MapProxy), exactly as
 * `load_configuration('<file>')`; resolves to what it wrote on stderr (its warnings) when it loads.
 */
export function loadWithMapProxy(file: string): Promise<{ loaded: boolean; warnings: string[] }> {
  const script = 'import sys\nfrom mapproxy.config.loader import load_configuration\nload_configuration(sys.argv[1])';
  const { command, args } = TEST_QGIS.python('-c', [script, file]);
  return new Promise((resolve) => {
    execFile(command, args, (error, _stdout, stderr) => {
      resolve({ loaded: error === null, warnings: stderr.split('\n').filter((line) => line.trim() !== '') });
    });
  });
}

/** The web mercator tile (XYZ numbering, as WMTS counts rows) that holds a longitude/latitude. */
export function tileAt(lon: number, lat: number, zoom: number): { z: number; x: number; y: number } {
  const tiles = 2 ** zoom;
  const radians = (lat * Math.PI) / 180;
  const x = Math.floor(((lon + 180) / 360) * tiles);
  const y = Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * tiles);
  return { z: zoom, x, y };
}

/** Every file under `dir` with the extension, by path relative to `dir`; none when it is missing. */
export function filesUnder(dir: string, extension: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Rewrites the fill colour of the layer's current symbol in a .qgs, standing in for the styles
 * API: `rgba` as QGIS writes it, `r,g,b,a`.
 */
export function setFillColour(qgsFile: string, layer: string, rgba: string): void {
  const text = readFileSync(qgsFile, 'utf8');
  const layerAt = text.indexOf(`<layername>${layer}</layername>`);
  // The symbol layer's `color` option, whatever order its attributes are written in.
  const option = /<Option\b(?=[^>]*\bname="color")[^>]*\bvalue="/g;
  option.lastIndex = Math.max(layerAt, 0);
  const found = layerAt < 0 ? null : option.exec(text);
  if (!found) throw new Error(`${qgsFile} has no fill colour for layer ${layer}`);
  const valueAt = found.index + found[0].length;
  writeFileSync(qgsFile, text.slice(0, valueAt) + rgba + text.slice(text.indexOf('"', valueAt)));
}

/** A layer as MapProxy's RESTful WMTS capabilities describe it. */
export interface WmtsLayer {
  /** The `ResourceURL` template of its PNG tiles. */
  template: string;
  /** Its `Time` dimension, when it has one. */
  time?: { default: string; values: string[] };
}

/** The layer named `name` in a WMTS capabilities document, or undefined when it is not there. */
export function wmtsLayer(capabilities: string, name: string): WmtsLayer | undefined {
  const block = [...capabilities.matchAll(/<Layer>([\s\S]*?)<\/Layer>/g)]
    .map((match) => match[1] ?? '')
    .find((layer) => layer.includes(`<ows:Identifier>${name}</ows:Identifier>`));
  if (block === undefined) return undefined;
  const template = /<ResourceURL format="image\/png" resourceType="tile"\s+template="([^"]*)"/.exec(block)?.[1] ?? '';
  const dimension =
    /<Dimension>\s*<ows:Identifier>Time<\/ows:Identifier>\s*<Default>([^<]*)<\/Default>([\s\S]*?)<\/Dimension>/.exec(
      block,
    );
  if (!dimension) return { template };
  const values = [...(dimension[2] ?? '').matchAll(/<Value>([^<]*)<\/Value>/g)].map((match) => match[1] ?? '');
  return { template, time: { default: dimension[1] ?? '', values } };
}

/** A tile URL from a RESTful WMTS template, for a tile of `GLOBAL_WEBMERCATOR`. */
export function tileUrl(template: string, at: { z: number; x: number; y: number }, time: string): string {
  return template
    .replace('{TileMatrixSet}', 'GLOBAL_WEBMERCATOR')
    .replace('{Time}', time)
    .replace('{TileMatrix}', String(at.z))
    .replace('{TileCol}', String(at.x))
    .replace('{TileRow}', String(at.y));
}
