import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { ErrorBoundary, PageFailure } from './components/error-boundary';
import { Page as PageHead } from './components/page';
import { TokenDialog } from './components/token-dialog';
import { useAdministrator } from './components/use-access';
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

const SECTIONS = [
  ['/', 'projects', 'Projects'],
  ['/checks', 'health', 'Health'],
  ['/instances', 'instances', 'Instances'],
  ['/server', 'server', 'Server'],
  ['/access', 'access', 'Access'],
] as const;

/** What a non-administrator sees at an administrator's page, which the API would refuse. */
function NeedsAdministrator(): JSX.Element {
  return (
    <PageHead title="This page needs an administrator">
      <p>
        Your token may not use this page: ask an administrator of Steward, or log in with another token.{' '}
        <Link href="/">See the projects</Link>.
      </p>
    </PageHead>
  );
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
  const administrator = useAdministrator();
  // An administrator's page waits for the identity: it is shown, or its refusal, never both.
  const refused = found?.route.admin === true && administrator !== true;
  const Page = refused ? undefined : loaded?.page;
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
          {SECTIONS.filter(([href]) => administrator === true || !findRoute(href)?.route.admin).map(
            ([href, name, title]) => (
              <Link key={href} href={href} aria-current={section === name ? 'page' : undefined}>
                {title}
              </Link>
            ),
          )}
          <a href="/docs">API reference</a>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {found ? (
          <>
            {refused && administrator === false && <NeedsAdministrator />}
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
