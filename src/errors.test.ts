import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, it } from '../test/support/node-test.js';
import { checkoutDir } from './checkout.js';
import {
  BadGateway,
  Conflict,
  DocumentFormatError,
  ERROR_CODES,
  InsufficientStorage,
  NotFound,
  RetryLater,
  StewardError,
  Unprocessable,
} from './errors.js';

/** The codes of the table of docs/errors.md, with the statuses each is answered with. */
function documentedCodes(): Map<string, string> {
  const page = readFileSync(join(checkoutDir(), 'docs', 'errors.md'), 'utf8');
  const section = page.slice(page.indexOf('## The codes'));
  const rows = [...section.matchAll(/^\| `([a-z_]+)` +\| ([\d, ]+?) +\|/gm)];
  return new Map(rows.map((row) => [row[1] ?? '', row[2] ?? '']));
}

describe('error codes', () => {
  it('are lower_snake and listed once', () => {
    for (const code of ERROR_CODES) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
    assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
  });

  it('are the codes docs/errors.md lists, no more and no fewer', () => {
    assert.deepEqual([...documentedCodes().keys()].sort(), [...ERROR_CODES].sort());
  });

  it('default to the code of the status, and keep the one a throw names', () => {
    assert.equal(new NotFound('gone').code, 'not_found');
    assert.equal(new NotFound('gone', { code: 'layer_not_found' }).code, 'layer_not_found');
    assert.equal(new Conflict('taken').code, 'conflict');
    assert.equal(new Unprocessable('bad').code, 'unprocessable');
    assert.equal(new BadGateway('down').code, 'bad_gateway');
    assert.equal(new InsufficientStorage('full').code, 'disk_full');
    assert.equal(new RetryLater(429, 'slow down', 5).code, 'rate_limited');
    assert.equal(new RetryLater(503, 'busy', 5).code, 'unavailable');
    assert.equal(new DocumentFormatError('not XML').code, 'project_unreadable');
    assert.equal(new StewardError(418, 'odd').code, 'bad_request');
    assert.equal(new StewardError(501, 'odd').code, 'internal');
  });

  it('are documented with the status of their class', () => {
    const documented = documentedCodes();
    const byClass: Array<[StewardError, string]> = [
      [new NotFound('x'), '404'],
      [new Conflict('x'), '409'],
      [new Unprocessable('x'), '422'],
      [new InsufficientStorage('x'), '507'],
      [new DocumentFormatError('x'), '422'],
    ];
    for (const [error, status] of byClass) assert.equal(documented.get(error.code), status, error.code);
  });
});
