/** The progress bar of an upload or a download, on a terminal's stderr: `[####------]  41%  420/1024 MiB  ETA 3s`. */
import { type Io } from './command.js';
import { duration, progressBar } from './format.js';

const MIB = 1024 * 1024;
/** Least time between redraws: a transfer reports every few KiB. */
const REDRAW_MS = 100;

export interface TransferProgress {
  /** `done` bytes of the transfer's `total` (undefined when the server did not say) so far. */
  update(done: number): void;
  /** Draws the last state and ends the line. */
  end(): void;
}

/** The line for `done` bytes of `total`, `elapsedMs` after the start. */
export function transferLine(done: number, total: number | undefined, elapsedMs: number): string {
  const mib = (bytes: number): string => (bytes / MIB).toFixed(1);
  if (total === undefined || total <= 0) return `${mib(done)} MiB`;
  const fraction = done / total;
  const left = fraction > 0 && fraction < 1 ? `  ETA ${duration((elapsedMs * (1 - fraction)) / fraction)}` : '';
  return `${progressBar(fraction)} ${`${Math.floor(fraction * 100)}%`.padStart(4)}  ${mib(done)}/${mib(total)} MiB${left}`;
}

/** A progress bar redrawn in place on a terminal; nothing elsewhere (a script's output stays clean). */
export function transferProgress(io: Io, label: string, total: number | undefined): TransferProgress {
  const started = Date.now();
  let drawn = 0;
  let last = 0;
  const draw = (done: number): void => io.err(`\r\x1b[K${label} ${transferLine(done, total, Date.now() - started)}`);
  return {
    update(done) {
      last = done;
      if (!io.isTTY || Date.now() - drawn < REDRAW_MS) return;
      drawn = Date.now();
      draw(done);
    },
    end() {
      if (!io.isTTY) return;
      draw(last);
      io.err('\n');
    },
  };
}
