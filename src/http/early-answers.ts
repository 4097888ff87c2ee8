import { type IncomingMessage, type ServerResponse } from 'node:http';

import { type FastifyBaseLogger } from 'fastify';

import { type EarlyHandler, type RequestObserver } from './app.js';

/**
 * What a handler answering ahead of the router does in place of a hook its route runs on a
 * request (wherever it was registered) or the app adds to its routes, by the hook and the name of
 * its function (anonymous: ''). A test compares each handler's list with its route's hooks, so
 * that a hook added on the way to the route is given its equivalent, or requests go through it.
 */
export interface HookEquivalent {
  hook: string;
  name: string;
  here: string;
}

/** The equivalents of the hooks the app gives every route, for a read answered ahead of the router with logAnswered. */
export const READ_HOOK_EQUIVALENTS: readonly HookEquivalent[] = [
  { hook: 'preParsing', name: 'guardBody', here: 'nothing: a GET has no body' },
  { hook: 'preHandler', name: 'checkBody', here: 'nothing: a GET has no body' },
  { hook: 'preSerialization', name: 'filterListing', here: 'nothing: its answer is not a listing' },
  { hook: 'onSend', name: 'addSecurityHeaders', here: 'API_HEADERS on every answer' },
  { hook: 'onResponse', name: 'recordChange', here: 'nothing: a read is no change to audit' },
  { hook: 'onResponse', name: 'observeRequest', here: 'observe() once the answer is written (observeAnswered)' },
  { hook: 'onRoute', name: 'wrapWrites', here: 'nothing: a read has no write origin' },
  { hook: 'onRoute', name: 'markOpenRoute', here: 'nothing: the route is protected, never open' },
  { hook: 'onRoute', name: '', here: "nothing: @fastify/swagger's, which lists routes for the OpenAPI description" },
];

/**
 * The handler of `serve`, which answers a request or hands it on with `next` (app.ts,
 * EarlyHandler); an unexpected failure of it is logged, and ends the connection.
 */
export function answeredEarly(
  logger: FastifyBaseLogger,
  serve: (...args: Parameters<EarlyHandler>) => Promise<void>,
): EarlyHandler {
  return (request, response, next, identity, requestId) => {
    serve(request, response, next, identity, requestId).catch((error: unknown) => {
      logger.error({ err: error, reqId: requestId }, 'unexpected failure');
      response.destroy();
    });
  };
}

/** A request's fields in its log lines, as Fastify's request serializer writes them. */
function logged(request: IncomingMessage): Record<string, unknown> {
  return {
    method: request.method,
    url: request.url,
    host: request.headers.host,
    remoteAddress: request.socket.remoteAddress,
    remotePort: request.socket.remotePort,
  };
}

/**
 * For a request answered ahead of the router (app.ts, EarlyHandler): once it is answered,
 * observes it as `route`, then hands `then` the time it took (ms).
 */
export function observeAnswered(
  observe: RequestObserver | undefined,
  route: string,
  request: IncomingMessage,
  response: ServerResponse,
  started: number,
  then?: (responseTime: number) => void,
): void {
  response.once('finish', () => {
    const responseTime = performance.now() - started;
    observe?.(request.method ?? 'GET', route, response.statusCode, responseTime / 1000);
    then?.(responseTime);
  });
}

/**
 * For a request answered ahead of the router (app.ts, EarlyHandler): logs it as Fastify does,
 * under the same request id, and once answered observes and logs it as `route`; the logger of
 * its lines.
 */
export function logAnswered(
  logger: FastifyBaseLogger,
  observe: RequestObserver | undefined,
  route: string,
  request: IncomingMessage,
  response: ServerResponse,
  requestId: string,
  started: number,
): FastifyBaseLogger {
  const log = logger.child({ reqId: requestId });
  log.info({ req: logged(request) }, 'incoming request');
  observeAnswered(observe, route, request, response, started, (responseTime) =>
    log.info({ res: { statusCode: response.statusCode }, responseTime }, 'request completed'),
  );
  return log;
}
