import assert from 'node:assert/strict';

import { type FastifyPluginAsync } from 'fastify';
import pino from 'pino';

import { describe, it } from '../../test/support/node-test.js';
import { buildApp } from './app.js';

/** A route that takes view_as and one that does not, each answering who the request runs as. */
const routes: FastifyPluginAsync = async (app) => {
  for (const path of ['/:project/layers', '/:project/tree'])
    app.get(path, async (request) => ({ roles: request.identity?.roles ?? null }));
};

describe('view_as with access control off', () => {
  it('is judged on the routes that take it only', async () => {
    const app = await buildApp(pino({ level: 'silent' }), [{ prefix: '/api/projects', routes }], {
      apiToken: undefined,
    });
    try {
      const get = async (url: string) => {
        const reply = await app.inject({ method: 'GET', url });
        return { status: reply.statusCode, body: reply.json<unknown>() };
      };
      assert.deepEqual(await get('/api/projects/town/layers'), { status: 200, body: { roles: null } });
      const refused = await get('/api/projects/town/layers?view_as=nobody');
      assert.equal(refused.status, 422, 'a role that does not exist');
      assert.deepEqual(await get('/api/projects/town/tree?view_as=nobody'), { status: 200, body: { roles: null } });
    } finally {
      await app.close();
    }
  });
});
