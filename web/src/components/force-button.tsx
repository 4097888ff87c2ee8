/**
 * The way on from the API's refusal of a change for fields a layer lacks (code `fields_missing`):
 * the same change sent again with `force=true`, once asked for by its own button.
 */
import type { JSX } from 'preact';

import { ApiError } from '../api/client';
import { type Action } from './use-api';

/** A button running `action` with `force` when its last run was refused as `fields_missing`; nothing otherwise. */
export function ForceButton({
  action,
  label,
}: {
  action: Action<[force: boolean]>;
  label: string;
}): JSX.Element | null {
  if (!(action.error instanceof ApiError && action.error.code === 'fields_missing')) return null;
  return (
    <button type="button" disabled={action.busy} onClick={() => void action.run(true)}>
      {label}
    </button>
  );
}
