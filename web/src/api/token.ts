/**
 * The API token (`STEWARD_API_TOKEN`), kept for the browser tab's session only. When the API answers
 * 401, listeners (the token dialog) are told, so that the person can give it or correct it.
 */
const KEY = 'steward.token';
const listeners = new Set<() => void>();
const changes = new Set<() => void>();

export function authorization(): string | undefined {
  const token = sessionStorage.getItem(KEY);
  return token ? `Bearer ${token}` : undefined;
}

export function hasToken(): boolean {
  return sessionStorage.getItem(KEY) !== null;
}

export function setToken(token: string | undefined): void {
  if (token === undefined || token === '') sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, token);
  for (const listener of changes) listener();
}

export function tokenRefused(): void {
  for (const listener of listeners) listener();
}

/** Calls `listener` whenever the API refuses a request for want of the right token. */
export function onTokenRefused(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Calls `listener` whenever the token changes, so that pages load again with it. */
export function onTokenChange(listener: () => void): () => void {
  changes.add(listener);
  return () => changes.delete(listener);
}
