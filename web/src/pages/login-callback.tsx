/** Where the OpenID provider sends the person back: the login is finished, then the page left is shown again. */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { finishLogin } from '../api/oidc';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { navigate } from '../router';
import type { PageProps } from '../routes';

export default function LoginCallbackPage({ query }: PageProps): JSX.Element {
  const [error, setError] = useState<Error | undefined>(undefined);
  useEffect(() => {
    finishLogin(query).then(
      (back) => navigate(back, { replace: true }),
      (failure: unknown) => setError(failure as Error),
    );
  }, []);
  return <Page title="Logging in">{error ? <ErrorMessage error={error} /> : <Loading what="the login" />}</Page>;
}
