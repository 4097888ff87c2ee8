import { createHash, timingSafeEqual } from 'node:crypto';
import { type FastifyInstance } from 'fastify';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * With a token configured, every /api route needs `Authorization: Bearer <token>`. Digests are
 * compared in constant time, so neither the token's content nor its length leaks through timing.
 */
export function installBearerAuth(app: FastifyInstance, token: string | undefined): void {
  if (token === undefined) {
    app.log.warn('STEWARD_API_TOKEN is not set: the API is open to anyone who can reach it');
    return;
  }
  const expected = digest(token);
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/') && request.url !== '/api') return;
    const header = request.headers.authorization ?? '';
    const presented = /^Bearer (.+)$/.exec(header)?.[1] ?? '';
    if (presented !== '' && timingSafeEqual(digest(presented), expected)) return;
    return reply
      .status(401)
      .header('www-authenticate', 'Bearer realm="steward"')
      .send({ error: 'this API needs Authorization: Bearer <STEWARD_API_TOKEN>' });
  });
}
