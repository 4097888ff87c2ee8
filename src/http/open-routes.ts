/**
 * The only routes anyone may call when STEWARD_API_TOKEN is set, by the pattern the router
 * matched: never by the URL as sent, which `/%61pi/`, `//api/` or `/API/` disguise. Every other
 * route, and a request no route takes, needs the token.
 */
/** The web console's files (console.ts); the console asks for the token on the API's first 401. */
const CONSOLE_ROUTES: ReadonlySet<string> = new Set(['/', '/*', '/assets/*']);

const OPEN_ROUTES: ReadonlySet<string> = new Set([
  ...CONSOLE_ROUTES,
  // For load balancers and orchestrators; they say nothing secret.
  '/health/live',
  '/health/ready',
  // How the console logs in (the OpenID provider and the console's public client): needed before it can.
  '/api/auth/config',
  // The reader of the API description, and the description: it holds no data, and the routes it
  // maps are named anyway by the console's open scripts. The reader loads it before any token is
  // given (its Authorize button is for the requests it sends).
  '/docs',
  '/docs/json',
  '/docs/yaml',
  '/api/openapi.json',
  '/docs/',
  '/docs/static/*',
  '/docs/static/index.html',
  '/docs/static/swagger-initializer.js',
]);

/** The console's login: it has no token yet when it exchanges the provider's code for one. */
const OPEN_POSTS: ReadonlySet<string> = new Set(['/api/auth/token']);

/** Whether `method` on the matched route pattern `url` (undefined when no route matched) is open. */
export function isOpenRoute(method: string, url: string | undefined): boolean {
  if (url === undefined) return false;
  if (method === 'POST') return OPEN_POSTS.has(url);
  return (method === 'GET' || method === 'HEAD') && OPEN_ROUTES.has(url);
}

/** Whether the matched route pattern `url` serves the web console's files. */
export function isConsoleRoute(url: string | undefined): boolean {
  return url !== undefined && CONSOLE_ROUTES.has(url);
}
