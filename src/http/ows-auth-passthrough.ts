import { type FastifyBaseLogger } from 'fastify';

import { type Identity } from '../access/service.js';
import { type ProjectStore } from '../storage/project-store.js';
import { type EarlyHandler, type RequestObserver } from './app.js';
import { answeredEarly, type HookEquivalent, observeAnswered, READ_HOOK_EQUIVALENTS } from './early-answers.js';
import { ORIGINAL_URI_MAX_LENGTH, OWS_ACCESS_HEADER, OWS_AUTH_ROUTE, owsAuthAnswer } from './ows-access.js';
import { API_HEADERS } from './security-headers.js';
import { type CachedProjects, TILES_AUTH_ROUTE, tilesAuthAnswer } from './tiles-access.js';

/** What the passthrough does in place of each hook of `GET /api/auth/ows` and `/tiles` (early-answers.ts). */
export const OWS_AUTH_HOOK_EQUIVALENTS: readonly HookEquivalent[] = [
  {
    hook: 'onRequest',
    name: 'identifyRequest',
    here: "only a request whose identity is known at once reaches the passthrough, which answers only what it allows; the rest go to the route's check",
  },
  { hook: 'onRoute', name: 'scopeProject', here: 'nothing: the route has no {project}' },
  ...READ_HOOK_EQUIVALENTS,
];

/** An auth route's judgement: the value of X-Steward-Access (none: undefined), or the refusal thrown. */
type AuthAnswer = (identity: Identity | undefined, uri: string) => Promise<string | undefined>;

/**
 * nginx's `auth_request`s (`GET /api/auth/ows` and `GET /api/auth/tiles`, routes/ows-auth.ts)
 * without Fastify's per-request work, for an identity known at once: every request to QGIS Server
 * and MapProxy through nginx waits for them. It answers 204 when the identity may make the
 * request, as the route would (the hooks' equivalents above; no log line at info, as the route
 * has none); a refusal, or a failure, goes on to the route, which answers it with the usual error
 * handling.
 */
export function owsAuthPassthrough(
  store: ProjectStore,
  cache: CachedProjects | undefined,
  logger: FastifyBaseLogger,
  observe?: RequestObserver,
): EarlyHandler {
  const answers = new Map<string, AuthAnswer>([
    [OWS_AUTH_ROUTE, (identity, uri) => owsAuthAnswer(identity, uri, store)],
    [TILES_AUTH_ROUTE, (identity, uri) => tilesAuthAnswer(identity, uri, cache).then(() => undefined)],
  ]);
  return answeredEarly(logger, async (request, response, next, identity) => {
    const route = request.url ?? '';
    const answer = request.method === 'GET' ? answers.get(route) : undefined;
    if (answer === undefined) return next();
    const started = performance.now();
    const uri = request.headers['x-original-uri'] ?? '';
    // What the route's schema refuses.
    if (typeof uri !== 'string' || uri.length > ORIGINAL_URI_MAX_LENGTH) return next();
    let rules: string | undefined;
    try {
      rules = await answer(identity, uri);
    } catch {
      return next();
    }
    // Logged as the route logs: not at info (routes/ows-auth.ts).
    observeAnswered(observe, route, request, response, started);
    response.writeHead(204, rules === undefined ? API_HEADERS : { ...API_HEADERS, [OWS_ACCESS_HEADER]: rules }).end();
  });
}
