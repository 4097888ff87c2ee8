/**
 * One client adding and removing a layer of a project, over and over, in a process of its own so
 * that the readers' client in the bench's process is not slowed by it:
 * `<api url> <project> <new layer's body as JSON> [writes per second]`. Without a rate each write
 * is sent as soon as the one before is answered; with one, they are sent at that pace (at once
 * while behind it). Both writes go through node:http, as the readers' client is lean too. Prints
 * "writing" once its first write is done and, once its stdin closes,
 * {"writes": <writes done>, "seconds": <time from the first write's answer to the last's>}.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { closeClient, send } from './http-client.js';

const [url = '', project = '', body = '{}', rate = '0'] = process.argv.slice(2);
const layer = JSON.parse(body) as { name: string };
const layers = `${url}/api/projects/${project}/layers`;
const interval = Number(rate) > 0 ? 1000 / Number(rate) : 0;

let stopped = false;
process.stdin.on('end', () => (stopped = true)).resume();

async function writePair(): Promise<void> {
  await send(layers, 'POST', undefined, layer);
  await send(`${layers}/${layer.name}`, 'DELETE');
}

await writePair();
process.stdout.write('writing\n');
const start = performance.now();
let writes = 0;
while (!stopped) {
  const due = start + writes * interval;
  if (interval > 0 && due > performance.now()) await sleep(due - performance.now());
  await writePair();
  writes += 2;
}
const seconds = (performance.now() - start) / 1000;
closeClient();
process.stdout.write(`${JSON.stringify({ writes, seconds })}\n`);
