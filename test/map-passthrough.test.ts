/**
 * The map passthrough answers as the app's routes do: its log lines carry the request id and the
 * client's address as Fastify's do, it is counted in the metrics, and its answer has the headers
 * every answer has. Drawn by the QGIS Server of a test stack, through an app whose log is kept.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';

import { type FastifyInstance } from 'fastify';
import pino from 'pino';

import { consoleBuildDir } from '../src/checkout.js';
import { apiRoutes } from '../src/http/api.js';
import { buildApp } from '../src/http/app.js';
import { MAP_ROUTE, mapPassthrough } from '../src/http/map-passthrough.js';
import { API_HEADERS } from '../src/http/security-headers.js';
import { makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

interface LogLine {
  reqId?: string;
  msg: string;
  req?: Record<string, unknown>;
  res?: { statusCode: number };
  responseTime?: number;
}

describe('the map passthrough', () => {
  let stack: Stack;
  let app: FastifyInstance;
  let url = '';
  const lines: LogLine[] = [];
  /** The URLs the passthrough handed on to the router. */
  const handedOn: string[] = [];
  const observed: { route: string; status: number }[] = [];

  before(async () => {
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'logged', author: 'test' });
    await stack.call('POST', '/api/projects/logged/layers', {
      type: 'raster',
      name: 'rgb',
      datasource: makeFixtures().rgbTiff,
    });
    const kept = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as LogLine);
        done();
      },
    });
    const logger = pino({ level: 'info' }, kept);
    const services = stack.api.services;
    const observe = (_method: string, route: string, status: number): void => void observed.push({ route, status });
    const passthrough = mapPassthrough(services.maps, logger, observe);
    app = await buildApp(logger, apiRoutes(services, consoleBuildDir()), {
      apiToken: undefined,
      observe,
      beforeRouting: (request, response, next, identity, requestId) =>
        passthrough(
          request,
          response,
          () => {
            handedOn.push(request.url ?? '');
            next();
          },
          identity,
          requestId,
        ),
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await app?.close();
    await stack?.stop();
  });

  it('logs and counts a map as Fastify logs and counts a route, under one request id each', async () => {
    const map = await fetch(`${url}/api/projects/logged/layers/rgb/map`);
    assert.equal(map.status, 200);
    assert.equal(map.headers.get('content-type'), 'image/png');
    await map.arrayBuffer();
    const routed = await fetch(`${url}/api/projects/logged/layers/rgb/map/url`);
    assert.equal(routed.status, 200);
    await routed.arrayBuffer();
    assert.deepEqual(handedOn, ['/api/projects/logged/layers/rgb/map/url'], 'the map went through the passthrough');

    const byRequest = (path: string): LogLine[] => {
      const incoming = lines.find((line) => line.msg === 'incoming request' && line.req?.['url'] === path);
      assert.ok(incoming?.reqId, `no incoming request line for ${path}`);
      return lines.filter((line) => line.reqId === incoming.reqId);
    };
    const [mapIn, mapOut, ...mapMore] = byRequest('/api/projects/logged/layers/rgb/map');
    const [routeIn, routeOut] = byRequest('/api/projects/logged/layers/rgb/map/url');
    assert.deepEqual(mapMore, []);
    assert.notEqual(mapIn?.reqId, routeIn?.reqId);
    assert.match(mapIn?.reqId ?? '', /^req-[0-9a-z]+$/);
    // The same fields as Fastify's, the client's address and port among them.
    assert.deepEqual(Object.keys(mapIn?.req ?? {}).sort(), Object.keys(routeIn?.req ?? {}).sort());
    assert.equal(mapIn?.req?.['remoteAddress'], '127.0.0.1');
    assert.equal(typeof mapIn?.req?.['remotePort'], 'number');
    assert.equal(mapOut?.msg, 'request completed');
    assert.equal(mapOut?.res?.statusCode, 200);
    assert.equal(typeof mapOut?.responseTime, 'number');
    assert.deepEqual(Object.keys(mapOut ?? {}).sort(), Object.keys(routeOut ?? {}).sort());

    assert.deepEqual(observed.slice(-2), [
      { route: MAP_ROUTE, status: 200 },
      { route: `${MAP_ROUTE}/url`, status: 200 },
    ]);
    for (const [name, value] of Object.entries(API_HEADERS)) {
      assert.equal(map.headers.get(name), value, `the map's ${name}`);
      assert.equal(routed.headers.get(name), value, `the route's ${name}`);
    }
  });
});
