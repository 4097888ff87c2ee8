import type { ComponentChildren, JSX } from 'preact';
import { useEffect } from 'preact/hooks';

/** A page's heading and document title. */
export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}): JSX.Element {
  useEffect(() => {
    document.title = `${title} · Steward`;
  }, [title]);
  return (
    <>
      <div class="page-head">
        <h1>{title}</h1>
        {actions && <div class="actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}
