import assert from 'node:assert/strict';

import { type FastifyInstance } from 'fastify';
import pino from 'pino';

import { describe, it } from '../../test/support/node-test.js';
import { buildApp } from './app.js';
import { HOOK_EQUIVALENTS, mapTarget } from './map-passthrough.js';

/** The hooks Fastify runs on a request, and onRoute, which changes every route added after it. */
const REQUEST_HOOKS = [
  'onRequest',
  'preParsing',
  'preValidation',
  'preHandler',
  'preSerialization',
  'onSend',
  'onResponse',
  'onError',
  'onTimeout',
  'onRequestAbort',
  'onRoute',
];

/** "hook name" of every such hook registered on the app itself, which every route runs. */
function appHooks(app: FastifyInstance): string[] {
  const key = Object.getOwnPropertySymbols(app).find((symbol) => symbol.description === 'fastify.hooks');
  assert.ok(key, "Fastify keeps its hooks under another symbol: this test's way of listing them needs updating");
  const hooks = (app as unknown as Record<symbol, Record<string, { name: string }[]>>)[key];
  return REQUEST_HOOKS.flatMap((hook) => (hooks?.[hook] ?? []).map(({ name }) => `${hook} ${name}`)).sort();
}

describe('the map passthrough and the app', () => {
  it('does the equivalent of every hook the app runs, and knows of no hook the app lacks', async () => {
    const app = await buildApp(pino({ level: 'silent' }), [], {
      apiToken: 'token',
      observe: () => undefined,
      beforeRouting: (_request, _response, next) => next(),
    });
    try {
      const listed = HOOK_EQUIVALENTS.map(({ hook, name }) => `${hook} ${name}`).sort();
      assert.deepEqual(
        appHooks(app),
        listed,
        'a hook was added to or taken from the app: give the map passthrough its equivalent (or send maps through the route) and update HOOK_EQUIVALENTS',
      );
    } finally {
      await app.close();
    }
  });
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
