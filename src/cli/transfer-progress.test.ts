import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { type Io } from './command.js';
import { transferLine, transferProgress } from './transfer-progress.js';

const MIB = 1024 * 1024;

function io(isTTY: boolean): Io & { written: string } {
  const terminal = {
    written: '',
    out: () => undefined,
    err: (text: string) => void (terminal.written += text),
    env: {},
    isTTY,
    signal: new AbortController().signal,
    readSecret: async () => '',
  };
  return terminal;
}

describe('transfer progress', () => {
  it('draws the share done, the MiB and the time left', () => {
    assert.equal(
      transferLine(256 * MIB, 1024 * MIB, 2000),
      `[########----------------------]  25%  256.0/1024.0 MiB  ETA 6s`,
    );
    assert.equal(transferLine(1024 * MIB, 1024 * MIB, 8000), `[${'#'.repeat(30)}] 100%  1024.0/1024.0 MiB`);
    assert.equal(transferLine(3 * MIB, undefined, 1000), '3.0 MiB', 'without a length, the bytes alone');
  });

  it('redraws in place on a terminal and ends the line; writes nothing elsewhere', () => {
    const terminal = io(true);
    const bar = transferProgress(terminal, 'Downloading p', 10 * MIB);
    bar.update(5 * MIB);
    bar.update(6 * MIB);
    bar.end();
    assert.match(terminal.written, /^\r\x1b\[KDownloading p \[#{15}-{15}\] {2}50%/);
    assert.match(terminal.written, /\r\x1b\[KDownloading p \[#{18}-{12}\] {2}60% {2}6\.0\/10\.0 MiB {2}ETA \d+s\n$/);
    const pipe = io(false);
    const quiet = transferProgress(pipe, 'Downloading p', 10 * MIB);
    quiet.update(MIB);
    quiet.end();
    assert.equal(pipe.written, '');
  });
});
