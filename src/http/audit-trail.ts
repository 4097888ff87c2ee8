import { type FastifyInstance, type FastifyRequest } from 'fastify';

import { type AuditEntry } from '../access/records.js';
import { type AccessService, isAnonymous } from '../access/service.js';
import { isChange, projectOf } from './access-policy.js';
import { routeRequest } from './auth.js';

/**
 * Whether the audit log keeps a request: a change (access-policy.ts's `isChange`) on a route of the
 * API, answered with whatever status. With access control on, only identified requests are kept:
 * one without a token, with a wrong one or from a throttled address is refused before anyone is
 * known, and so is the anonymous role's refused write (401), so that no one can fill the log
 * without a token; Fastify's request log has them.
 */
function audited(request: FastifyRequest, status: number, accessControl: boolean): boolean {
  const route = request.routeOptions.url;
  if (route === undefined || !route.startsWith('/api/') || !isChange(request.method, route)) return false;
  if (!accessControl) return true;
  const identity = request.identity;
  return identity !== undefined && !(isAnonymous(identity) && status === 401);
}

function entryOf(request: FastifyRequest, status: number): AuditEntry {
  const identity = request.identity;
  const project = projectOf(routeRequest(request), request.body);
  return {
    at: new Date().toISOString(),
    who: identity?.name ?? null,
    token: identity?.token ?? null,
    method: request.method,
    route: request.routeOptions.url ?? '',
    path: request.url.split('?', 1)[0] ?? request.url,
    project: project?.name ?? null,
    schema: project?.schema ?? null,
    status,
  };
}

/**
 * Keeps every change made through the API in the audit log (docs/access.md), once it is answered:
 * who, when, the route, the project and the status, refusals and failures included. Keeping it
 * never delays nor fails the request; the API waits for the entries under way when it closes.
 */
export function installAuditTrail(app: FastifyInstance, access: AccessService, accessControl: boolean): void {
  const pending = new Set<Promise<void>>();
  // A callback hook rather than an async one: nothing more than a test for the reads.
  app.addHook('onResponse', function recordChange(request, reply, done) {
    if (audited(request, reply.statusCode, accessControl)) {
      const kept = access.record(entryOf(request, reply.statusCode)).finally(() => pending.delete(kept));
      pending.add(kept);
    }
    done();
  });
  app.addHook('onClose', async () => {
    await Promise.all(pending);
  });
}
