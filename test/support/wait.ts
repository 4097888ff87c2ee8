/** Polling for what engines do in their own time: a registration, a job's end, a drawn pixel. */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` every `intervalMs` until it gives a value other than `undefined` or `false`, and
 * returns that value; fails after `timeoutMs` naming `what` (a function is asked then, so that it
 * can tell the last state seen).
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await sleep(intervalMs);
  }
}

/** Polls until `condition` holds; fails after `timeoutMs` naming `what`. */
export async function until(
  what: string | (() => string),
  condition: () => boolean | Promise<boolean>,
  timeoutMs?: number,
  intervalMs?: number,
): Promise<void> {
  await waitFor(what, async () => (await condition()) || undefined, timeoutMs, intervalMs);
}
