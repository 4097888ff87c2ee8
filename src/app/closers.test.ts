import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { Closers } from './closers.js';

describe('Closers', () => {
  it('closes the last opened first, every one even after a failure, and throws the first failure', async () => {
    const closers = new Closers();
    const closed: string[] = [];
    closers.add(() => closed.push('pool'));
    closers.add(() => {
      closed.push('fleet');
      throw new Error('fleet');
    });
    closers.add(async () => {
      closed.push('port');
      await Promise.reject(new Error('port'));
    });
    await assert.rejects(closers.closeAll(), /^Error: port$/);
    assert.deepEqual(closed, ['port', 'fleet', 'pool']);
    await closers.closeAll();
    assert.deepEqual(closed, ['port', 'fleet', 'pool'], 'a second close closes nothing again');
  });

  it("closes what a failed start opened, and throws the start's error", async () => {
    const closers = new Closers();
    const closed: string[] = [];
    const failures: unknown[] = [];
    const start = async (): Promise<string> => {
      closers.add(() => closed.push('pool'));
      closers.add(() => Promise.reject(new Error('cannot close')));
      throw new Error('port taken');
    };
    await assert.rejects(
      closers.opening(start, (error) => failures.push(error)),
      /port taken/,
    );
    assert.deepEqual(closed, ['pool']);
    assert.match(String(failures[0]), /cannot close/);
    assert.equal(
      await new Closers().opening(
        async () => 'started',
        () => assert.fail('nothing to close'),
      ),
      'started',
    );
  });
});
