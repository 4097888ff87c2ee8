/**
 * Large uploads for the tests and benchmarks of streamed uploads: a GeoTIFF of random bytes of
 * any size written block by block, a file sent as a body without being read into memory, and a
 * process's resident memory as the kernel counts it.
 */
import { randomFillSync } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';

import gdal from 'gdal-async';

/** Rows of the random GeoTIFF written at once. */
const ROWS_AT_ONCE = 256;
const WIDTH = 8192;

/** A one-band Byte GeoTIFF (EPSG:4326) of random pixels of about `bytes` bytes; its path. */
export function writeRandomGeoTiff(path: string, bytes: number): string {
  const height = Math.max(1, Math.ceil(bytes / WIDTH));
  const dataset = gdal.drivers.get('GTiff').create(path, WIDTH, height, 1, gdal.GDT_Byte);
  dataset.geoTransform = [0, 1 / WIDTH, 0, 1, 0, -1 / WIDTH];
  dataset.srs = gdal.SpatialReference.fromEPSG(4326);
  const band = dataset.bands.get(1);
  const block = new Uint8Array(WIDTH * ROWS_AT_ONCE);
  for (let row = 0; row < height; row += ROWS_AT_ONCE) {
    const rows = Math.min(ROWS_AT_ONCE, height - row);
    randomFillSync(block);
    band.pixels.write(0, row, WIDTH, rows, block.subarray(0, WIDTH * rows));
  }
  dataset.close();
  return path;
}

export interface SentFile {
  status: number;
  body: unknown;
}

/** Sends the file at `path` as the body of a `method` request to `url`, read from the disk as it goes. */
export async function sendFile(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<SentFile> {
  const headers = { 'content-length': String(statSync(path).size), ...options.headers };
  return new Promise((resolve, reject) => {
    const sending = request(url, { method: options.method ?? 'PUT', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    sending.on('error', reject);
    createReadStream(path).on('error', reject).pipe(sending);
  });
}

/** A process's resident memory, KiB: now, and the most since it started or since `resetPeak`. */
export interface Memory {
  rss: number;
  peak: number;
}

export function processMemory(pid: number): Memory {
  const status = statusOf(pid);
  return { rss: status.get('VmRSS') ?? 0, peak: status.get('VmHWM') ?? 0 };
}

function statusOf(pid: number): Map<string, number> {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return new Map(
    [...text.matchAll(/^(\w+):\s+(\d+) kB$/gm)].map((match) => [match[1] ?? '', Number(match[2])] as const),
  );
}

/**
 * The process that serves for the API process `pid`: the process itself, or the child it started
 * with a bounded heap (src/runtime/heap-bound.ts), followed down while there is one.
 */
export function servingProcess(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return children.length === 1 ? servingProcess(Number(children[0])) : pid;
}

/** Makes the process's peak resident memory (VmHWM) its present one (Linux's clear_refs). */
export async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Sends `start` then zero bytes to `url` by PUT in chunks, `total` in all, declaring no length
 * (chunked) unless `declared`, or stops sending and drops the connection after `cutAt` bytes
 * (then resolves undefined).
 */
export async function sendChunked(
  url: string,
  total: number,
  cutAt?: number,
  start: Uint8Array = new Uint8Array(0),
  declared = false,
): Promise<SentFile | undefined> {
  const chunk = Buffer.alloc(64 * 1024);
  const headers = { 'content-type': 'application/zip', ...(declared && { 'content-length': String(total) }) };
  return new Promise((resolve, reject) => {
    let answered = false;
    const sending = request(url, { method: 'PUT', headers }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (data: Buffer) => chunks.push(data));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text });
      });
    });
    // Once answered, the rest of the body may meet a closed connection: that is the point.
    sending.on('error', (error) => (answered || cutAt !== undefined ? undefined : reject(error)));
    const write = async (): Promise<void> => {
      if (start.length > 0) sending.write(start);
      for (let sent = start.length; sent < total && !answered; sent += chunk.length) {
        if (cutAt !== undefined && sent >= cutAt) {
          sending.destroy();
          resolve(undefined);
          return;
        }
        const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
        if (!sending.write(piece)) await new Promise((done) => sending.once('drain', done));
      }
      sending.end();
    };
    void write();
  });
}
