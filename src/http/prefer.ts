/**
 * The `Prefer` request header (RFC 7240): a client asks for `respond-async` to have long work
 * answered at once with a job (202) instead of when the work is done.
 */
import { type FastifyRequest } from 'fastify';

/** The preference tokens of every `Prefer` header of the request, lower case, without their parameters. */
function preferences(request: FastifyRequest): string[] {
  const header = request.headers.prefer;
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return values
    .flatMap((value) => value.split(','))
    .map((preference) => (preference.split(';')[0] ?? '').split('=')[0]?.trim().toLowerCase() ?? '')
    .filter((token) => token.length > 0);
}

/** Whether the client prefers an answer at once, with the work continuing as a job. */
export function prefersAsync(request: FastifyRequest): boolean {
  return preferences(request).includes('respond-async');
}
