import assert from 'node:assert/strict';

import { type FastifyInstance } from 'fastify';
import pino from 'pino';

import { describe, it } from '../../test/support/node-test.js';
import { type LayerService } from '../services/layers.js';
import { type MapService } from '../services/maps.js';
import { type ProjectStore } from '../storage/project-store.js';
import { buildApp } from './app.js';
import { HOOK_EQUIVALENTS, MAP_ROUTE, mapTarget } from './map-passthrough.js';
import { OWS_AUTH_ROUTE } from './ows-access.js';
import { OWS_AUTH_HOOK_EQUIVALENTS } from './ows-auth-passthrough.js';
import { layerRoutes } from './routes/layers.js';
import { owsAuthRoutes } from './routes/ows-auth.js';
import { TILES_AUTH_ROUTE } from './tiles-access.js';

/**
 * "hook name" of every hook the GET route `pattern` runs on a request, wherever it was registered
 * (the app, a plugin around the route or the route itself), read from the tree of routes Fastify
 * prints with their hooks; anonymous functions by the name ''.
 */
function routeHooks(app: FastifyInstance, pattern: string): string[] {
  const segments: string[] = [];
  let path = '';
  const hooks: string[] = [];
  for (const line of app.printRoutes({ includeHooks: true, commonPrefix: false, method: 'GET' }).split('\n')) {
    const route = /^([│ ]*)[├└]── (\S+) \(/.exec(line);
    if (route) {
      const depth = (route[1] ?? '').length / 4;
      segments.splice(depth, segments.length, route[2] ?? '');
      path = segments.join('');
      continue;
    }
    const printed = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (!printed || path !== pattern) continue;
    for (const name of JSON.parse(printed[2] ?? '[]') as string[]) {
      hooks.push(`${printed[1]} ${name === 'anonymous()' ? '' : name.replace(/\(\)$/, '')}`);
    }
  }
  assert.ok(hooks.length > 0, `Fastify prints no hooks of ${pattern}: this test's way of reading them needs updating`);
  return hooks;
}

/** "onRoute name" of every onRoute hook on the app itself, which changes every route added after it. */
function appRouteHooks(app: FastifyInstance): string[] {
  const key = Object.getOwnPropertySymbols(app).find((symbol) => symbol.description === 'fastify.hooks');
  assert.ok(key, "Fastify keeps its hooks under another symbol: this test's way of listing them needs updating");
  const hooks = (app as unknown as Record<symbol, Record<string, { name: string }[]>>)[key];
  return (hooks?.['onRoute'] ?? []).map(({ name }) => `onRoute ${name}`);
}

describe('the passthroughs and the app', () => {
  for (const { route, equivalents } of [
    { route: MAP_ROUTE, equivalents: HOOK_EQUIVALENTS },
    { route: OWS_AUTH_ROUTE, equivalents: OWS_AUTH_HOOK_EQUIVALENTS },
    { route: TILES_AUTH_ROUTE, equivalents: OWS_AUTH_HOOK_EQUIVALENTS },
  ]) {
    it(`do the equivalent of every hook ${route} runs, and know of no hook it lacks`, async () => {
      // The routes' modules with services they never call here: only their hooks are read.
      const routes = [
        layerRoutes({} as LayerService, {} as MapService),
        owsAuthRoutes({} as ProjectStore, undefined, undefined),
      ];
      const app = await buildApp(pino({ level: 'silent' }), routes, {
        apiToken: 'token',
        observe: () => undefined,
        beforeRouting: (_request, _response, next) => next(),
      });
      try {
        const listed = equivalents.map(({ hook, name }) => `${hook} ${name}`).sort();
        await app.ready();
        assert.deepEqual(
          [...routeHooks(app, route), ...appRouteHooks(app)].sort(),
          listed,
          `a hook was added to or taken from ${route}: give its passthrough the equivalent (or send its requests through the route) and update its list of equivalents`,
        );
      } finally {
        await app.close();
      }
    });
  }
});

describe('mapTarget', () => {
  it('reads the project, the layer and the schema of a map URL', () => {
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map'), {
      project: 'world',
      layer: 'polygons',
      schema: undefined,
    });
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map/'), {
      project: 'world',
      layer: 'polygons',
      schema: undefined,
    });
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map?schema=atlas'), {
      project: 'world',
      layer: 'polygons',
      schema: 'atlas',
    });
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map?'), {
      project: 'world',
      layer: 'polygons',
      schema: undefined,
    });
  });

  it('decodes percent-encoded names', () => {
    assert.deepEqual(mapTarget('/api/projects/caf%C3%A9/layers/a%20b%3Fc/map?schema=s%26t'), {
      project: 'café',
      layer: 'a b?c',
      schema: 's&t',
    });
  });

  it('leaves every other URL to the router', () => {
    for (const url of [
      '/api/projects/world/layers/polygons/map/url',
      '/api/projects/world/layers/polygons',
      '/api/projects/world/layers/polygons/map/extra',
      '/api/projects/world/layers//map',
      '/api/projects/world/layers/polygons/map?schema=a&schema=b',
      '/api/projects/world/layers/polygons/map?format=png',
      '/api/projects/world/layers/poly%E0gons/map',
      '/api/projects/world%/layers/polygons/map',
      '/API/projects/world/layers/polygons/map',
    ]) {
      assert.equal(mapTarget(url), undefined, url);
    }
  });
});
