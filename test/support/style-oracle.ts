/** PyQGIS as the oracle of style tests (runs test/support/style_oracle.py), and XML comparison. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import type { XmlElement } from '../../src/qgis/xml/node.js';
import { parseXml } from '../../src/qgis/xml/parse.js';

const SCRIPT = fileURLToPath(new URL('./style_oracle.py', import.meta.url));

export type Rgba = [number, number, number, number];

export interface OracleResult {
  ok: boolean;
  message?: string;
  properties?: Record<string, unknown>;
  pixels?: Rgba[] | Rgba[][];
  layers?: Record<string, { valid: boolean; styles: string[]; current: string }>;
}

/** Runs operations in one PyQGIS process and returns one result per operation. */
export function pyqgis(operations: object[]): Promise<OracleResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', [SCRIPT], {
      env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`style_oracle.py exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as OracleResult[]);
    });
    child.stdin.end(JSON.stringify({ operations }));
  });
}

/** Makes the test data with GDAL: vector.gpkg (point, line, polygon), rgb.tif (10,100,200), gray.tif (5 * column). */
export async function makeData(directory: string): Promise<void> {
  await pyqgis([{ op: 'make_data', dir: directory }]);
}

export interface Comparable {
  name: string;
  attributes: Record<string, string>;
  text: string;
  children: Comparable[];
}

function comparable(node: XmlElement): Comparable {
  const elements = node.children.filter((child): child is XmlElement => child.kind === 'element');
  const text = node.children.map((child) => (child.kind === 'text' ? child.value : '')).join('');
  return {
    name: node.name,
    attributes: Object.fromEntries([...node.attributes].sort(([a], [b]) => a.localeCompare(b))),
    text: elements.length > 0 ? text.trim() : text,
    children: elements.map(comparable),
  };
}

/** An XML document as a tree where attribute order and indentation no longer matter. */
export function comparableXml(xml: string): Comparable {
  return comparable(parseXml(xml).root);
}

/**
 * Where two SLDs differ as trees (Qt writes attributes in a random order, QHash's): the first line
 * that differs, each with its attributes sorted; undefined when they are the same document.
 */
export function xmlDifference(ours: string, theirs: string): string | undefined {
  if (JSON.stringify(comparableXml(ours)) === JSON.stringify(comparableXml(theirs))) return undefined;
  const sorted = (line: string): string =>
    line.replace(/^(<[^\s>]+)((?:\s+[^\s=]+="[^"]*")+)(\s*\/?>.*)$/, (_, open: string, list: string, end: string) =>
      [open, ...(list.match(/[^\s=]+="[^"]*"/g) ?? []).sort(), end].join(' '),
    );
  const [mine, other] = [ours, theirs].map((xml) => xml.split('\n').map((line) => sorted(line.trim())));
  const at = mine?.findIndex((line, index) => line !== other?.[index]) ?? -1;
  return `line ${at + 1}: ${mine?.[at]} / ${other?.[at]}`;
}
