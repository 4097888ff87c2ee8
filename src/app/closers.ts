/**
 * What start-up opened, to close in reverse order: on stop, or at once when a later step of
 * start-up fails, so that a failed start leaves no pool, port, timer or fleet row behind.
 */
export class Closers {
  private readonly steps: (() => unknown)[] = [];

  /** `close` runs when everything is closed, before what was added earlier. */
  add(close: () => unknown): void {
    this.steps.push(close);
  }

  /** Runs every step, the last added first, each even if an earlier one failed; throws the first failure. */
  async closeAll(): Promise<void> {
    const failures: unknown[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }

  /**
   * `start`'s result; if it fails, whatever it added is closed before its error is thrown on (a
   * failure to close is `onCloseFailure`'s, the start's error being the one to tell).
   */
  async opening<T>(start: () => Promise<T>, onCloseFailure: (error: unknown) => void): Promise<T> {
    try {
      return await start();
    } catch (error) {
      await this.closeAll().catch(onCloseFailure);
      throw error;
    }
  }
}
