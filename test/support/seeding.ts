import assert from 'node:assert/strict';

import { waitFor } from './wait.js';

/** The half width of the web mercator grid, in metres. */
const HALF = 20037508.342789244;

function mercator(lon: number, lat: number): [number, number] {
  const radians = (lat * Math.PI) / 180;
  return [(lon * HALF) / 180, (Math.log(Math.tan(Math.PI / 4 + radians / 2)) * HALF) / Math.PI];
}

/** The extent of the polygons fixture. */
export const POLYGONS: [number, number, number, number] = [1, 44, 3, 46];

/** MapProxy draws and stores tiles in blocks of 4 x 4 (its default `meta_size`). */
const META = 4;

/**
 * The tiles of GLOBAL_WEBMERCATOR (origin top left, 256 px, 2^z tiles a side) that seeding a
 * longitude/latitude box stores on level z, as `z/x/y`: the tiles the box covers, widened to the
 * 4 x 4 metatiles they belong to, within the grid.
 */
export function seededTiles(box: [number, number, number, number], z: number): string[] {
  const [minx, miny] = mercator(box[0], box[1]);
  const [maxx, maxy] = mercator(box[2], box[3]);
  const side = 2 ** z;
  const size = (2 * HALF) / side;
  const first = (value: number): number => Math.floor(Math.floor(value / size) / META) * META;
  const last = (value: number): number =>
    Math.min(side, (Math.floor((Math.ceil(value / size) - 1) / META) + 1) * META) - 1;
  const tiles: string[] = [];
  for (let x = first(minx + HALF); x <= last(maxx + HALF); x += 1) {
    for (let y = first(HALF - maxy); y <= last(HALF - miny); y += 1) tiles.push(`${z}/${x}/${y}`);
  }
  return tiles;
}

/** The tiles seeding the box stores on levels `from` to `to`, sorted. */
export function seededLevels(box: [number, number, number, number], from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, index) => seededTiles(box, from + index))
    .flat()
    .sort();
}

export interface JobReply {
  id: string;
  state: string;
  progress: number;
  done: number;
  total: number;
  error: string | null;
  params: Record<string, unknown>;
  result?: Record<string, unknown>;
}

export type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

const ended = (job: JobReply): boolean => ['succeeded', 'failed', 'cancelled'].includes(job.state);

/** Polls the job until it has ended (or `until` holds) and returns it. */
export async function waitForJob(call: Call, id: string, until = ended): Promise<JobReply> {
  let last: JobReply | undefined;
  return waitFor(
    () => `job ${id} to get there (last seen ${JSON.stringify(last)})`,
    async () => {
      const reply = await call('GET', `/api/jobs/${id}`);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      last = reply.body as JobReply;
      return until(last) && last;
    },
    120_000,
    100,
  );
}
