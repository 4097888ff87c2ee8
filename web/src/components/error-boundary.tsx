/**
 * What a page shows instead of a blank screen when its script fails to load or its rendering
 * throws: the failure in words and a button that tries again.
 */
import { Component, type ComponentChildren, type JSX } from 'preact';

/** The failure and its retry, as every page shows it. */
export function PageFailure(props: { what: string; error: Error; onRetry: () => void }): JSX.Element {
  return (
    <section class="card" role="alert">
      <h1>{props.what}</h1>
      <p>{props.error.message}</p>
      <button type="button" class="primary" onClick={props.onRetry}>
        Try again
      </button>
    </section>
  );
}

interface State {
  error: Error | undefined;
}

/** Catches an error thrown while rendering its children; "Try again" renders them anew. */
export class ErrorBoundary extends Component<{ children: ComponentChildren }, State> {
  override state: State = { error: undefined };

  static override getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render(): ComponentChildren {
    const { error } = this.state;
    if (!error) return this.props.children;
    return <PageFailure what="This page failed" error={error} onRetry={() => this.setState({ error: undefined })} />;
  }
}
