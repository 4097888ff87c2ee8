/**
 * Closed-loop load: `clients` kept-alive connections, each sending its next request as soon as the
 * previous one is answered, for a fixed time. The rate counts the replies completed in that time
 * over the time from the start to the last of them, so a run that ends mid-request is not
 * rounded down by it; the bench process's own CPU time over the run says what the client cost.
 */
import { Agent } from 'node:http';

import { send } from './http-client.js';

/** `clients` connections sending `each` requests one after the other: a warm-up, whatever it takes. */
export async function warmUp(url: string, clients: number, each: number, check: (body: Buffer) => void): Promise<void> {
  const client = async (): Promise<void> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let sent = 0; sent < each; sent++) check(await send(url, 'GET', agent));
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
}

export interface LoadRun {
  perSecond: number;
  /** Replies within the time. */
  replies: number;
  /** Every reply, with those to the requests in flight when the time was up. */
  allReplies: number;
  /** Wall time of the run, the requests in flight when the time was up included. */
  seconds: number;
  /** CPU time of this process (client, child logs) over the wall time of the run, in cores. */
  clientCores: number;
}

/** Runs the load; `check` throws on a reply that is not what the server should answer. */
export async function closedLoop(
  url: string,
  clients: number,
  seconds: number,
  check: (body: Buffer) => void,
): Promise<LoadRun> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  const completions: number[] = [];
  const client = async (): Promise<void> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (performance.now() < end) {
        check(await send(url, 'GET', agent));
        completions.push(performance.now());
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const cpu = process.cpuUsage(cpuBefore);
  const wall = performance.now() - start;
  const inTime = completions.filter((at) => at <= end);
  const last = inTime.at(-1);
  if (last === undefined) throw new Error(`no reply within ${seconds} s from ${url}`);
  return {
    perSecond: inTime.length / ((last - start) / 1000),
    replies: inTime.length,
    allReplies: completions.length,
    seconds: wall / 1000,
    clientCores: (cpu.user + cpu.system) / 1000 / wall,
  };
}
