import type { JSX } from 'preact';

import { Link } from '../router';

const TABS = [
  ['/access', 'Tokens and roles'],
  ['/access/audit', 'Audit log'],
] as const;

/** The pages about who may do what, and who did what. */
export function AccessTabs({ current }: { current: string }): JSX.Element {
  return (
    <nav class="tabs" aria-label="Pages about access">
      {TABS.map(([path, name]) => (
        <Link key={path} href={path} aria-current={path === current ? 'page' : undefined}>
          {name}
        </Link>
      ))}
    </nav>
  );
}
