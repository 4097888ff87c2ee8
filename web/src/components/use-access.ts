/**
 * What the console's user may do (docs/access.md): `GET /api/whoami` and each project's `access`
 * (from its metadata), each asked once for the token kept, so that pages show only the controls
 * one may use. Until they are known the controls stay hidden rather than flash for who may not.
 * When the access may have changed (a 403, the tab shown again: api/access-changes.ts) each answer
 * kept is asked again, and the pages are told only if one differs, so a refusal cannot loop.
 */
import { useEffect } from 'preact/hooks';

import { onAccessMayHaveChanged } from '../api/access-changes';
import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { authorization } from '../api/token';
import { useApi } from './use-api';

interface Kept {
  answer: Promise<unknown>;
  read: () => Promise<unknown>;
}

/** The answers asked with the token `keptFor`: another token asks again. */
let keptFor = authorization();
const kept = new Map<string, Kept>();
const changes = new Set<() => void>();
let askingAgain = false;

function askOnce<T>(what: string, read: () => Promise<T>): Promise<T> {
  const token = authorization();
  if (token !== keptFor) {
    kept.clear();
    keptFor = token;
  }
  const known = kept.get(what)?.answer as Promise<T> | undefined;
  if (known) return known;
  const answer = read();
  kept.set(what, { answer, read });
  // A failure (no token yet, the network) is asked again next time.
  answer.catch(() => {
    if (kept.get(what)?.answer === answer) kept.delete(what);
  });
  return answer;
}

/** Whether two settled answers differ: in outcome, or in what they hold. */
function differ(before: PromiseSettledResult<unknown>, after: PromiseSettledResult<unknown>): boolean {
  if (before.status !== after.status) return true;
  return (
    before.status === 'fulfilled' && JSON.stringify(before.value) !== JSON.stringify((after as typeof before).value)
  );
}

/** Asks each kept answer again, and tells the pages when one changed. */
async function askAgain(): Promise<void> {
  if (askingAgain) return;
  askingAgain = true;
  try {
    const compared = await Promise.all(
      [...kept].map(async ([what, { answer, read }]) => {
        const [before, after] = await Promise.allSettled([answer, read()]);
        // A failure now (the project no longer readable) is asked again by the page, and shown there.
        if (after.status === 'fulfilled') kept.set(what, { answer: Promise.resolve(after.value), read });
        else kept.delete(what);
        return differ(before, after);
      }),
    );
    if (compared.includes(true)) for (const listener of changes) listener();
  } finally {
    askingAgain = false;
  }
}

onAccessMayHaveChanged(() => void askAgain());

/** Loads `load` again whenever a kept answer changed. */
function useKeptChanges(reload: () => void): void {
  useEffect(() => {
    changes.add(reload);
    return () => void changes.delete(reload);
  }, [reload]);
}

const readWhoami = () => api.get('/api/whoami', {});

/** The identity of the console's token (undefined until known); asked again when the token changes. */
export function useIdentity(): Awaited<ReturnType<typeof readWhoami>> | undefined {
  const loaded = useApi(() => askOnce('whoami', readWhoami), []);
  useKeptChanges(loaded.reload);
  return loaded.data;
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
  useKeptChanges(loaded.reload);
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
