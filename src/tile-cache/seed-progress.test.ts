import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { BadGateway } from '../errors.js';
import { SeedRetries } from './seed-progress.js';

const FAILURE =
  '[2026-11-23 15:43:07,740] mapproxy.source.wms - WARNING - could not retrieve WMS map: HTTP Error "http://q/ows": 400\n';
const retry = (seconds: number): string =>
  `An error occured. Retry in ${seconds} seconds: SourceError('HTTP Error'). Retries left: 100\n`;

describe('SeedRetries', () => {
  it('gives a seed up at the fourth retry, once, with the request that failed', () => {
    const retries = new SeedRetries();
    const verdicts = [2, 4, 8, 16, 32].map((seconds) => retries.feed(FAILURE + retry(seconds)));
    assert.deepEqual(verdicts, [false, false, false, true, false]);
    assert.ok(retries.failure instanceof BadGateway);
    assert.match(retries.failure.message, /gave up after 3 retries: HTTP Error "http:\/\/q\/ows": 400$/);
    assert.doesNotMatch(retries.failure.clientMessage, /http:/);
  });

  it('reads lines split across chunks, and the spelling of later MapProxy releases', () => {
    const retries = new SeedRetries();
    const text = [2, 4, 8, 16].map((seconds) => retry(seconds).replace('occured', 'occurred')).join('');
    const verdicts = text.match(/.{1,7}/gs)?.map((chunk) => retries.feed(chunk)) ?? [];
    assert.equal(verdicts.filter(Boolean).length, 1);
  });

  it('lets a seed with fewer retries go on', () => {
    const retries = new SeedRetries();
    assert.equal(retries.feed(retry(2) + retry(4) + retry(8) + 'Seeding cache\n'), false);
    assert.equal(retries.failure, undefined);
  });
});
