/**
 * Moments when what the console's identity may do may have changed behind its back: the API
 * refused a request with 403 (a role narrowed meanwhile), or the tab is shown again after being
 * hidden. The access the console keeps (components/use-access.ts) is asked again then.
 */
const listeners = new Set<() => void>();

export function accessMayHaveChanged(): void {
  for (const listener of listeners) listener();
}

/** Calls `listener` at each such moment. */
export function onAccessMayHaveChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) accessMayHaveChanged();
});
