import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

import { useInterval } from './use-api';

/** An answer of a log read on from a cursor: one without `next` (an older plugin) holds every line. */
export interface CursorPage<L> {
  lines: L[];
  next?: number;
  missed?: number;
}

export interface FollowedLines<L> {
  lines: L[];
  error: Error | undefined;
  /** Lines dropped by the server between two reads, before they could be shown. */
  missed: number;
}

/**
 * A log followed every `ms` while `live` and the tab visible: the first read (no cursor) takes
 * what the server keeps, each later one only the lines after the last cursor, appended and trimmed
 * to the newest `keep`. When `keys` change, the lines are read anew.
 */
export function useCursorLines<L>(
  read: (since: number | undefined, signal: AbortSignal) => Promise<CursorPage<L>>,
  keys: unknown[],
  options: { ms: number; live: boolean; keep: number },
): FollowedLines<L> {
  const [state, setState] = useState<FollowedLines<L>>({ lines: [], error: undefined, missed: 0 });
  const cursor = useRef<number | undefined>(undefined);
  const reading = useRef<AbortController | undefined>(undefined);
  const tick = useCallback(() => {
    if (reading.current) return;
    const controller = new AbortController();
    reading.current = controller;
    const since = cursor.current;
    read(since, controller.signal).then(
      (page) => {
        if (controller.signal.aborted) return;
        reading.current = undefined;
        cursor.current = page.next;
        const whole = since === undefined || page.next === undefined;
        setState((kept) => ({
          lines: (whole ? page.lines : [...kept.lines, ...page.lines]).slice(-options.keep),
          error: undefined,
          missed: kept.missed + (whole ? 0 : (page.missed ?? 0)),
        }));
      },
      (failure: unknown) => {
        if (controller.signal.aborted) return;
        reading.current = undefined;
        setState((kept) => ({ ...kept, error: failure instanceof Error ? failure : new Error(String(failure)) }));
      },
    );
    // The caller names what the read depends on, as with useEffect.
  }, keys);
  useEffect(() => {
    cursor.current = undefined;
    setState({ lines: [], error: undefined, missed: 0 });
    tick();
    return () => {
      reading.current?.abort();
      reading.current = undefined;
    };
  }, [tick]);
  useInterval(tick, options.ms, options.live);
  return state;
}
