import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

interface DialogProps {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
}

/** Where the focus goes back to once a dialog closes: where it was, or the page when that is gone. */
function giveFocusBack(previous: Element | null): void {
  const target = previous instanceof HTMLElement && previous.isConnected ? previous : document.getElementById('main');
  target?.focus();
}

/**
 * A modal `<dialog>`: focus moves into it, Escape closes it, and focus returns where it was, whether
 * the dialog is closed or taken off the page. Its title's id is its own, so that two dialogs on a
 * page are each named by their title.
 */
export function Dialog({ title, open, onClose, children }: DialogProps): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = `dialog-title-${useId()}`;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog || !open) return undefined;
    const previous = document.activeElement;
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      giveFocusBack(previous);
    };
  }, [open]);
  // Content that replaces a loading message can take the focused element with it: the focus then
  // goes to the dialog's first control rather than to the page behind.
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog?.open || dialog.contains(document.activeElement)) return;
    dialog.querySelector<HTMLElement>('input, select, textarea, button, [href], [tabindex]')?.focus();
  });
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}
