import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { startLogin } from '../api/oidc';
import { hasToken, onTokenRefused, setToken } from '../api/token';
import { Dialog } from './dialog';
import { ErrorMessage } from './messages';

/**
 * Opens when the API answers 401: the API is protected by STEWARD_API_TOKEN. The token given is
 * tried at once; a refused one is said so, and the dialog stays open.
 */
export function TokenDialog(): JSX.Element {
  const [open, setOpen] = useState(false);
  const [refused, setRefused] = useState(false);
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [checking, setChecking] = useState(false);
  const [login, setLogin] = useState<Answer<'/api/auth/config'>['oidc']>(null);
  useEffect(
    () =>
      onTokenRefused(() => {
        setRefused(hasToken());
        setOpen(true);
        api.get('/api/auth/config').then(
          (config) => setLogin(config.oidc),
          () => setLogin(null),
        );
      }),
    [],
  );
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setChecking(true);
    setError(undefined);
    try {
      await api.get('/api/projects', { token: value });
      setOpen(false);
      setValue('');
      setToken(value);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setChecking(false);
    }
  };
  return (
    <Dialog title="API token" open={open} onClose={() => setOpen(false)}>
      <form onSubmit={(event) => void submit(event)}>
        <p>
          {refused
            ? 'The API refused the token this page was using.'
            : 'This Steward is protected by a token (STEWARD_API_TOKEN).'}{' '}
          Give it to continue; it is kept for this browser tab only.
        </p>
        {login && (
          <p>
            <button
              type="button"
              onClick={() => void startLogin(login).catch((failure: Error) => setError(failure.message))}
            >
              Log in with OpenID Connect
            </button>
          </p>
        )}
        <label>
          Token
          <input
            type="password"
            autocomplete="off"
            required
            value={value}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
        </label>
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="submit" class="primary" disabled={checking}>
            {checking ? 'Checking…' : 'Use this token'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
