/**
 * One client adding and removing a layer of a project, over and over, in a process of its own so
 * that the readers' client in the bench's process is not slowed by it:
 * `<api url> <project> <new layer's body as JSON>`. Prints "writing" once its first write is done
 * and, once its stdin closes, {"writes": <writes done>}.
 */
import { apiCall } from '../test/support/http.js';
import { created } from './api.js';
import { closeClient, send } from './http-client.js';

const [url = '', project = '', body = '{}'] = process.argv.slice(2);
const layer = JSON.parse(body) as { name: string };
const api = { call: (method: string, path: string, content?: unknown) => apiCall(url, method, path, content) };

let stopped = false;
process.stdin.on('end', () => (stopped = true)).resume();

let writes = 0;
while (!stopped) {
  await created(api, `/api/projects/${project}/layers`, layer);
  await send(`${url}/api/projects/${project}/layers/${layer.name}`, 'DELETE');
  if (writes === 0) process.stdout.write('writing\n');
  writes += 2;
}
closeClient();
process.stdout.write(`${JSON.stringify({ writes })}\n`);
