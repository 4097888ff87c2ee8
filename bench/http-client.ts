/**
 * The bench's HTTP client: node:http over one kept-alive connection, so that a latency measures
 * the server and not the client (fetch adds about 0.2 ms of its own to every request).
 */
import { Agent, type OutgoingHttpHeaders, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * Sends a request, with `json` as its JSON body when given, and reads the whole reply; throws
 * unless it is a 2xx. `via`: a connection of the caller's; `extra`: more headers.
 */
export function send(
  url: string,
  method = 'GET',
  via: Agent = agent,
  json?: unknown,
  extra: OutgoingHttpHeaders = {},
): Promise<Buffer> {
  const body = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
  const headers: OutgoingHttpHeaders = body
    ? { ...extra, 'content-type': 'application/json', 'content-length': body.byteLength }
    : extra;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, agent: via, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const reply = Buffer.concat(chunks);
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(reply);
        else reject(new Error(`${method} ${url}: ${status} ${reply.toString('utf8')}`));
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export function closeClient(): void {
  agent.destroy();
}
