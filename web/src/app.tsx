import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { TokenDialog } from './components/token-dialog';
import { Link, useLocation } from './router';
import { findRoute, type PageProps, type Route } from './routes';

type Loaded = { route: Route; page: (props: PageProps) => JSX.Element | null };

function usePage(route: Route | undefined): Loaded | undefined {
  const [loaded, setLoaded] = useState<Loaded | undefined>(undefined);
  useEffect(() => {
    if (!route) return;
    let current = true;
    void route.page().then((module) => {
      if (current) setLoaded({ route, page: module.default as Loaded['page'] });
    });
    return () => {
      current = false;
    };
  }, [route]);
  return loaded?.route === route ? loaded : undefined;
}

export function App(): JSX.Element {
  const location = useLocation();
  const found = findRoute(location.path);
  const loaded = usePage(found?.route);
  const section = found?.route.section;
  const Page = loaded?.page;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Steward
        </Link>
        <nav aria-label="Sections">
          <Link href="/" aria-current={section === 'projects' ? 'page' : undefined}>
            Projects
          </Link>
          <Link href="/instances" aria-current={section === 'instances' ? 'page' : undefined}>
            Instances
          </Link>
          <a href="/docs">API reference</a>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {found ? (
          Page && <Page params={found.params} query={location.query} />
        ) : (
          <section>
            <h1>Page not found</h1>
            <p>
              The console has no page at <code>{location.path}</code>. <Link href="/">See the projects</Link>.
            </p>
          </section>
        )}
      </main>
      <TokenDialog />
    </>
  );
}
