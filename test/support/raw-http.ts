import { type IncomingHttpHeaders, request } from 'node:http';

export interface RawRequest {
  method: string;
  /** Path and query sent as written: no URL parser resolves `..` or re-encodes anything. */
  target: string;
  contentType?: string;
  body?: string | Buffer;
  /** Headers besides the content type and length (an `authorization`). */
  headers?: Record<string, string>;
}

export interface RawReply {
  status: number;
  contentType: string;
  text: string;
  headers: IncomingHttpHeaders;
}

const TIMEOUT_MS = 30_000;

/** Sends a request with the path exactly as given, which fetch() would normalise first. */
export function rawRequest(baseUrl: string, sent: RawRequest): Promise<RawReply> {
  const base = new URL(baseUrl);
  const headers: Record<string, string | number> = { ...sent.headers };
  if (sent.contentType !== undefined) headers['content-type'] = sent.contentType;
  if (sent.body !== undefined) headers['content-length'] = Buffer.byteLength(sent.body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: base.hostname, port: base.port, method: sent.method, path: sent.target, headers, timeout: TIMEOUT_MS },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'] ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
            headers: response.headers,
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    outgoing.on('error', reject);
    outgoing.end(sent.body);
  });
}
