import type { ComponentChildren, JSX } from 'preact';

import { Dialog } from './dialog';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

interface ConfirmProps {
  title: string;
  /** The button that goes ahead, naming what it does ("Replace the file"). */
  confirm: string;
  /** The button that changes nothing ("Keep it"). */
  cancel: string;
  /** Runs the action; the dialog closes once it succeeded and shows its failure otherwise. */
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  children: ComponentChildren;
}

/** Asks before a destructive action: nothing happens until the person presses the named button. */
export function ConfirmDialog(props: ConfirmProps): JSX.Element {
  const action = useAction(props.onConfirm);
  const go = async (): Promise<void> => {
    if (await action.run()) props.onClose();
  };
  return (
    <Dialog title={props.title} open onClose={props.onClose}>
      {props.children}
      <ErrorMessage error={action.error} />
      <div class="dialog-actions">
        <button type="button" onClick={props.onClose}>
          {props.cancel}
        </button>
        <button type="button" class="danger" disabled={action.busy} onClick={() => void go()}>
          {action.busy ? 'Working…' : props.confirm}
        </button>
      </div>
    </Dialog>
  );
}
