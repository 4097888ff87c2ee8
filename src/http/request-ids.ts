import { type IncomingMessage } from 'node:http';

/**
 * Request ids in Fastify's own form (`req-1`, `req-2`, ... in base 36), one per request whoever
 * asks first: the map passthrough, or Fastify once the passthrough hands a request on.
 */
export function requestIds(): (request: IncomingMessage) => string {
  const given = new WeakMap<IncomingMessage, string>();
  let count = 0;
  return (request) => {
    let id = given.get(request);
    if (id === undefined) {
      id = `req-${(++count).toString(36)}`;
      given.set(request, id);
    }
    return id;
  };
}
