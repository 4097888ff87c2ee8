import type { JSX } from 'preact';

import { Link } from '../router';

const TABS = [
  ['/server', 'Settings'],
  ['/server/log', 'Steward’s log'],
] as const;

/** The pages about Steward itself. */
export function ServerTabs({ current }: { current: string }): JSX.Element {
  return (
    <nav class="tabs" aria-label="Pages about this server">
      {TABS.map(([path, name]) => (
        <Link key={path} href={path} aria-current={path === current ? 'page' : undefined}>
          {name}
        </Link>
      ))}
    </nav>
  );
}
