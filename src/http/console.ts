/**
 * The web console: the single-page application built from `web/` (see the README), served at
 * `/`. Its hashed assets are cached for good; every other path outside the API's own answers with
 * index.html, so that a client-side route such as `/projects/roads` loads the console. No token is
 * needed for these files: the console asks for one when the API answers 401.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import fastifyStatic from '@fastify/static';
import { type FastifyPluginAsync, type FastifyReply } from 'fastify';

import { NotFound } from '../errors.js';
import { sendError } from './errors.js';
import { type RouteModule } from './route-module.js';

/** Paths that keep their own meaning: a console route never answers for them. */
const RESERVED = /^\/(api|docs|health|metrics)(\/|$)/;

/** Rounds of percent-decoding undone, so that a proxy decoding once more finds no reserved path either. */
const DECODINGS = 3;

function decoded(path: string): string {
  let current = path;
  for (let round = 0; round < DECODINGS; round++) {
    try {
      const next = decodeURIComponent(current);
      if (next === current) break;
      current = next;
    } catch {
      break;
    }
  }
  return current;
}

/**
 * Whether a URL's path is, or disguises, one of the reserved paths: percent-encoded (`/%61pi/`),
 * with empty or dot segments (`//api/`, `/./api/`, `/x/../api/`), backslashes, parameters
 * (`/api;x/`), or in other case (`/API/`). The router matches some of these to no route, and the console must not answer them
 * with its page as if they were its own.
 */
export function isReservedPath(url: string): boolean {
  const path = decoded(url.split('?')[0] ?? '').toLowerCase();
  const segments: string[] = [];
  for (const written of path.split(/[/\\]+/)) {
    // What other servers ignore in a segment: parameters after `;`, control characters, spaces.
    const segment = (written.split(';')[0] ?? '').replace(/[\u0000-\u0020\u007f]/g, '');
    if (segment === '..') segments.pop();
    else if (segment !== '' && segment !== '.') segments.push(segment);
  }
  return RESERVED.test(`/${segments.join('/')}`);
}

/** `dir` is the console's build folder (index.html and assets/); it may not exist yet. */
export function consoleRoutes(dir: string): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const indexFile = join(dir, 'index.html');
    const built = existsSync(indexFile);
    const index = built ? readFileSync(indexFile) : undefined;
    if (built) {
      await app.register(fastifyStatic, {
        root: join(dir, 'assets'),
        prefix: '/assets/',
        immutable: true,
        maxAge: '365d',
        index: false,
      });
    }
    const page = (reply: FastifyReply): FastifyReply => {
      if (!index) {
        return sendError(reply, new NotFound('the web console is not built: run `npm run build:web` (or npm start)'));
      }
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
    };
    app.get('/', { schema: { hide: true } }, async (_request, reply) => page(reply));
    app.get('/*', { schema: { hide: true } }, async (request, reply) =>
      isReservedPath(request.url) ? reply.callNotFound() : page(reply),
    );
  };
  return { prefix: '', routes };
}
