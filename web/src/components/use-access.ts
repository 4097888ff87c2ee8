/**
 * What the console's user may do (docs/access.md): `GET /api/whoami` and each project's `access`
 * (from its metadata), each asked once for the token kept, so that pages show only the controls
 * one may use. Until they are known the controls stay hidden rather than flash for who may not.
 */
import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { authorization } from '../api/token';
import { useApi } from './use-api';

/** The answers asked with the token `keptFor`: another token asks again. */
let keptFor = authorization();
const kept = new Map<string, Promise<unknown>>();

function askOnce<T>(what: string, read: () => Promise<T>): Promise<T> {
  const token = authorization();
  if (token !== keptFor) {
    kept.clear();
    keptFor = token;
  }
  const known = kept.get(what) as Promise<T> | undefined;
  if (known) return known;
  const answer = read();
  kept.set(what, answer);
  // A failure (no token yet, the network) is asked again next time.
  answer.catch(() => {
    if (kept.get(what) === answer) kept.delete(what);
  });
  return answer;
}

const readWhoami = () => api.get('/api/whoami', {});

/** The identity of the console's token (undefined until known); asked again when the token changes. */
export function useIdentity(): Awaited<ReturnType<typeof readWhoami>> | undefined {
  return useApi(() => askOnce('whoami', readWhoami), []).data;
}

/** Whether the user administers Steward (so without access control); undefined until known. */
export function useAdministrator(): boolean | undefined {
  return useIdentity()?.admin;
}

/** What the user may do with the project: `read`, `write` or `admin`; undefined until known. */
export function useProjectAccess(ref: ProjectRef) {
  const identity = useIdentity();
  const key = `${ref.project}\n${ref.schema ?? ''}`;
  const loaded = useApi(async () => {
    if (identity === undefined) return undefined;
    if (identity.admin) return { key, access: 'admin' as const };
    const info = await askOnce(`project\n${key}`, () =>
      api.get('/api/projects/{project}', { path: { project: ref.project }, query: schemaQuery(ref) }),
    );
    return { key, access: info.access };
  }, [key, identity]);
  // The last answer is kept while the next loads: another project's is not this one's.
  return loaded.data?.key === key ? loaded.data.access : undefined;
}

/** Whether a project's `access` lets one change it. */
export function writes(access: string | undefined): boolean {
  return access === 'write' || access === 'admin';
}

/** Whether the user may change the project: false until known. */
export function useMayWrite(ref: ProjectRef): boolean {
  return writes(useProjectAccess(ref));
}
