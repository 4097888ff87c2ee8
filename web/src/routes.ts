/**
 * The console's pages. Each is loaded when first shown, so the first page does not wait for the
 * map library. A page receives the route's parameters and the query (`schema` for projects kept in
 * PostgreSQL).
 */
import type { FunctionComponent } from 'preact';

import { projectRef } from './api/projects';
import { readProjectAhead } from './components/use-project-layers';
import { matchPath } from './router';

export interface PageProps {
  params: Record<string, string>;
  query: URLSearchParams;
}

export interface Route {
  path: string;
  /** The entry of the navigation the page belongs to. */
  section: 'projects' | 'health' | 'instances' | 'server' | 'access';
  page: () => Promise<{ default: FunctionComponent<PageProps> }>;
  /** For administrators only (src/http/access-policy.ts): others are told so rather than shown a refusal. */
  admin?: true;
  /** Starts the page's first reads while its script loads (read-ahead.ts). */
  readAhead?: (props: PageProps) => void;
}

export const routes: Route[] = [
  { path: '/', section: 'projects', page: () => import('./pages/projects') },
  {
    path: '/projects/:project',
    section: 'projects',
    page: () => import('./pages/project'),
    readAhead: ({ params, query }) => readProjectAhead(projectRef(params, query)),
  },
  { path: '/projects/:project/cache', section: 'projects', page: () => import('./pages/cache') },
  { path: '/projects/:project/processing', section: 'projects', page: () => import('./pages/processing') },
  { path: '/projects/:project/history', section: 'projects', page: () => import('./pages/history') },
  { path: '/projects/:project/publish', section: 'projects', page: () => import('./pages/publish') },
  { path: '/projects/:project/services', section: 'projects', page: () => import('./pages/services') },
  { path: '/checks', section: 'health', page: () => import('./pages/health') },
  { path: '/instances', section: 'instances', admin: true, page: () => import('./pages/instances') },
  { path: '/instances/:instance', section: 'instances', admin: true, page: () => import('./pages/instance') },
  { path: '/server', section: 'server', admin: true, page: () => import('./pages/server') },
  { path: '/server/log', section: 'server', admin: true, page: () => import('./pages/server-log') },
  { path: '/access', section: 'access', admin: true, page: () => import('./pages/access') },
  { path: '/access/audit', section: 'access', admin: true, page: () => import('./pages/audit') },
  { path: '/login/callback', section: 'access', page: () => import('./pages/login-callback') },
];

export function findRoute(path: string): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return undefined;
}
