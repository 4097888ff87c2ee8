/** Maps asked of a pool while its processes are killed: statuses, steady load and first answers. */
import { bytes } from '../../src/services/maps.js';
import { type FastcgiQgisClient } from '../../src/transport/qgis-fastcgi.js';
import { until } from './wait.js';

/** A map's status: 200 for a PNG, the status negated for anything else, 0 when nothing answered. */
export async function mapStatus(url: string): Promise<number> {
  try {
    const response = await fetch(url);
    const body = Buffer.from(await response.arrayBuffer());
    return response.headers.get('content-type') === 'image/png' && body.length > 0 ? response.status : -response.status;
  } catch {
    return 0;
  }
}

/** The status of a map asked of the pool's processes over FastCGI, as the API asks; 0 when none answered. */
export async function directStatus(client: FastcgiQgisClient, url: string): Promise<number> {
  try {
    const answer = await client.prepare(url)();
    const body = await bytes(answer.body);
    return answer.headers.get('content-type') === 'image/png' && body.length > 0 ? answer.status : -answer.status;
  } catch {
    return 0;
  }
}

/** When `status` first answers 200, asked again every 10 ms. */
export async function firstAnswer(status: () => Promise<number>): Promise<number> {
  await until('a map', async () => (await status()) === 200, 30_000, 10);
  return Date.now();
}

export interface Load {
  /** Ends the load once the requests in flight are answered. */
  stop(): Promise<{ sent: number; failed: string[] }>;
}

/** `clients` clients asking `status` one request after the other until stopped; what failed and why. */
export function underLoad(status: () => Promise<number>, clients: number): Load {
  let running = true;
  let sent = 0;
  const failed: string[] = [];
  const client = async (): Promise<void> => {
    while (running) {
      sent++;
      const answer = await status();
      if (answer !== 200) failed.push(String(answer));
    }
  };
  const all = Array.from({ length: clients }, () => client());
  return {
    async stop() {
      running = false;
      await Promise.all(all);
      return { sent, failed };
    },
  };
}
