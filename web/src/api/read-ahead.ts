/**
 * Reads started as soon as the console knows which page it shows, while the page's script is still
 * loading (the map's page waits for OpenLayers): the page takes each answer once, when it asks.
 */

/** An answer older than this is not taken: the page reads afresh. */
const FRESH_MS = 5000;

const started = new Map<string, { at: number; answer: Promise<unknown> }>();

export function readAhead(key: string, read: () => Promise<unknown>): void {
  const answer = read();
  // Its failure is the page's to show, when it takes it.
  answer.catch(() => undefined);
  started.set(key, { at: Date.now(), answer });
}

/** The answer read ahead under `key`, once, when fresh; else what `read` answers. */
export function readOnce<T>(key: string, read: () => Promise<T>): Promise<T> {
  const ahead = started.get(key);
  started.delete(key);
  return ahead && Date.now() - ahead.at < FRESH_MS ? (ahead.answer as Promise<T>) : read();
}
