/**
 * A group's properties, saved with the whole tree: its name, what QGIS Server publishes of it (WMS
 * title, short name, abstract), and whether it shows one child at a time.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import type { GroupFields, TreeGroup } from '../api/tree-edits';
import { Dialog } from './dialog';
import { ErrorMessage } from './messages';

interface GroupDialogProps {
  group: TreeGroup;
  /** Group names taken by others. */
  taken: string[];
  onSave: (fields: GroupFields) => Promise<boolean>;
  /** Why the last save failed. */
  failure: Error | undefined;
  onClose: () => void;
}

export function GroupPropertiesDialog({ group, taken, onSave, failure, onClose }: GroupDialogProps): JSX.Element {
  const [name, setName] = useState(group.name);
  const [title, setTitle] = useState(group.title ?? '');
  const [shortName, setShortName] = useState(group.short_name ?? '');
  const [abstract, setAbstract] = useState(group.abstract ?? '');
  const [exclusive, setExclusive] = useState(group.mutually_exclusive);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const trimmed = name.trim();
    if (trimmed === '') return setError('The group needs a name.');
    if (trimmed !== group.name && taken.includes(trimmed))
      return setError(`There is a group named “${trimmed}” already.`);
    setError(undefined);
    const fields = { name: trimmed, title, short_name: shortName.trim(), abstract, mutually_exclusive: exclusive };
    if (await onSave(fields)) onClose();
  };
  return (
    <Dialog title={`Group ${group.name}`} open onClose={onClose}>
      <form
        class="form"
        aria-label={`Properties of group ${group.name}`}
        noValidate
        onSubmit={(event) => void submit(event)}
      >
        <div class="fields stacked">
          <label>
            Group name
            <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </label>
          <label>
            Title (published)
            <input value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
          </label>
          <label>
            Short name (published name)
            <input value={shortName} onInput={(event) => setShortName(event.currentTarget.value)} />
          </label>
          <label>
            Abstract
            <textarea rows={3} value={abstract} onInput={(event) => setAbstract(event.currentTarget.value)} />
          </label>
        </div>
        <label class="check">
          <input type="checkbox" checked={exclusive} onChange={(event) => setExclusive(event.currentTarget.checked)} />
          One layer at a time (mutually exclusive)
        </label>
        <ErrorMessage error={error ?? failure} />
        <div class="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Save the group
          </button>
        </div>
      </form>
    </Dialog>
  );
}
