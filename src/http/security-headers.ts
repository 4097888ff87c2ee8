import { type FastifyInstance, type FastifyReply } from 'fastify';

import { isConsoleRoute } from './open-routes.js';

/**
 * What every answer of the API says to a browser: read no type into it but the one given, send no
 * referrer on, and never be framed. An API answer may load and run nothing (a stored document
 * opened in a tab runs no script it holds); the console's pages run only their own files.
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * The console's own policy: its scripts, styles, images and API calls all come from its origin,
 * but the images of the basemaps the operator offers (`imageOrigins`). Inline styles are allowed:
 * the map and chart libraries position their elements with them; no inline script is.
 */
function consolePolicy(imageOrigins: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    ["img-src 'self' data: blob:", ...imageOrigins].join(' '),
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Marks a stored document as a download, so that a browser never shows it on Steward's origin. */
export function asAttachment(reply: FastifyReply, filename: string): FastifyReply {
  const ascii = filename.replace(/[^A-Za-z0-9._-]/g, '_');
  return reply.header(
    'content-disposition',
    `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
  );
}

/**
 * Gives every answer API_HEADERS, the console's pages their own policy, which may load images from
 * `imageOrigins` too. A route that set its own policy (the API reader's pages) keeps it.
 */
export function installSecurityHeaders(app: FastifyInstance, imageOrigins: readonly string[] = []): void {
  const policy = consolePolicy(imageOrigins);
  app.addHook('onSend', function addSecurityHeaders(request, reply, payload, done) {
    const own = reply.getHeader('content-security-policy');
    void reply.headers(API_HEADERS);
    if (own !== undefined) void reply.header('content-security-policy', own);
    else if (isConsoleRoute(request.routeOptions.url)) void reply.header('content-security-policy', policy);
    done(null, payload);
  });
}
