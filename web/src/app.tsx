import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { ErrorBoundary, PageFailure } from './components/error-boundary';
import { TokenDialog } from './components/token-dialog';
import { Link, useLocation } from './router';
import { findRoute, type PageProps, type Route } from './routes';

type Loaded = { route: Route; page?: (props: PageProps) => JSX.Element | null; error?: Error };

/** The page's module, loaded when first shown; a failed load is kept to be shown with a retry. */
function usePage(route: Route | undefined): Loaded | undefined {
  const [loaded, setLoaded] = useState<Loaded | undefined>(undefined);
  useEffect(() => {
    if (!route) return;
    let current = true;
    route.page().then(
      (module) => {
        if (current) setLoaded({ route, page: module.default as Loaded['page'] });
      },
      (failure: unknown) => {
        const reason = failure instanceof Error ? failure.message : String(failure);
        const error = new Error(
          `The console could not load this page's script (${reason}): the network or the server may be down, or Steward was updated since this tab opened.`,
        );
        if (current) setLoaded({ route, error });
      },
    );
    return () => {
      current = false;
    };
  }, [route]);
  return loaded?.route === route ? loaded : undefined;
}

/** Moves the focus to the main region when the path changes, as a page load would reset it. */
function useFocusOnNavigation(path: string): void {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('main')?.focus();
  }, [path]);
}

export function App(): JSX.Element {
  const location = useLocation();
  const found = findRoute(location.path);
  const loaded = usePage(found?.route);
  // Started as the location is first rendered, so that a page already loaded takes the answers too.
  const readFor = useRef('');
  const here = `${location.path}?${location.query.toString()}`;
  if (found && readFor.current !== here) {
    readFor.current = here;
    found.route.readAhead?.({ params: found.params, query: location.query });
  }
  const section = found?.route.section;
  const Page = loaded?.page;
  useFocusOnNavigation(location.path);
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
          <Link href="/checks" aria-current={section === 'health' ? 'page' : undefined}>
            Health
          </Link>
          <Link href="/instances" aria-current={section === 'instances' ? 'page' : undefined}>
            Instances
          </Link>
          <Link href="/server" aria-current={section === 'server' ? 'page' : undefined}>
            Server
          </Link>
          <Link href="/access" aria-current={section === 'access' ? 'page' : undefined}>
            Access
          </Link>
          <a href="/docs">API reference</a>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {found ? (
          <>
            {loaded?.error && (
              // A failed dynamic import stays failed in the module map: only a reload fetches it anew.
              <PageFailure
                what="This page could not be loaded"
                error={loaded.error}
                onRetry={() => window.location.reload()}
              />
            )}
            {Page && (
              <ErrorBoundary key={location.path}>
                <Page params={found.params} query={location.query} />
              </ErrorBoundary>
            )}
          </>
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
