/**
 * The bench's HTTP client: node:http over one kept-alive connection, so that a latency measures
 * the server and not the client (fetch adds about 0.2 ms of its own to every request).
 */
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** Sends a request and reads the whole reply; throws unless it is a 2xx. `via`: a connection of the caller's. */
export function send(url: string, method = 'GET', via: Agent = agent): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, agent: via }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(body);
        else reject(new Error(`${method} ${url}: ${status} ${body.toString('utf8')}`));
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

export function closeClient(): void {
  agent.destroy();
}
