import type { JSX } from 'preact';

/** An API failure in words: never swallowed, announced to screen readers. */
export function ErrorMessage({ error }: { error: Error | string | undefined }): JSX.Element | null {
  if (error === undefined) return null;
  return (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  );
}

export function Loading({ what }: { what: string }): JSX.Element {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}
