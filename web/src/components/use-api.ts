import { useCallback, useEffect, useState } from 'preact/hooks';

import { onTokenChange } from '../api/token';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when the component appears, when `keys` change and when the token changes; the last
 * answer is kept while a new one loads, so that a table does not flash empty.
 */
export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, keys: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [version, setVersion] = useState(0);
  const reload = useCallback(() => setVersion((value) => value + 1), []);
  useEffect(() => onTokenChange(reload), [reload]);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    load(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (controller.signal.aborted) return;
        setError(failure instanceof Error ? failure : new Error(String(failure)));
        setLoading(false);
      },
    );
    return () => controller.abort();
    // The caller names what the load depends on, as with useEffect.
  }, [...keys, version]);
  return { data, error, loading, reload };
}

export interface Action<A extends unknown[]> {
  run: (...args: A) => Promise<boolean>;
  busy: boolean;
  error: Error | undefined;
}

/** A change made through the API: busy while it runs, its failure kept to be shown. */
export function useAction<A extends unknown[]>(work: (...args: A) => Promise<unknown>): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>(undefined);
  const run = async (...args: A): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await work(...args);
      return true;
    } catch (failure) {
      setError(failure instanceof Error ? failure : new Error(String(failure)));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error };
}

/**
 * Calls `tick` every `ms` milliseconds while the component is shown, `enabled` and the browser tab
 * visible (a live view's refresh): a hidden tab polls nothing, and catches up at once when shown.
 */
export function useInterval(tick: () => void, ms: number, enabled = true): void {
  useEffect(() => {
    if (!enabled) return undefined;
    let id: ReturnType<typeof setInterval> | undefined;
    const start = (): void => {
      id ??= setInterval(tick, ms);
    };
    const stop = (): void => {
      clearInterval(id);
      id = undefined;
    };
    const changed = (): void => {
      if (document.visibilityState !== 'visible') return stop();
      tick();
      start();
    };
    if (document.visibilityState === 'visible') start();
    document.addEventListener('visibilitychange', changed);
    return () => {
      stop();
      document.removeEventListener('visibilitychange', changed);
    };
  }, [tick, ms, enabled]);
}
