/**
 * Publishing a project from QGIS Desktop (`PUT /api/projects/{project}/archive`): a .qgs, a .qgz
 * or a zip bundle of the project and its data. An existing project is replaced only once the
 * person confirms it; broken layers are refused unless the person asks to store them anyway.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, ApiError, apiUrl, send } from '../api/client';
import { ConfirmDialog } from './confirm-dialog';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

type Published = Answer<'/api/projects/{project}/archive', 'put'>;

export async function publishArchive(
  project: string,
  schema: string | undefined,
  file: File,
  options: { replace: boolean; allowBroken: boolean },
): Promise<Published> {
  const url = apiUrl(
    '/api/projects/{project}/archive',
    { project },
    {
      ...(schema ? { schema } : {}),
      ...(options.replace ? { replace: 'true' } : {}),
      ...(options.allowBroken ? { allow_broken: 'true' } : {}),
    },
  );
  const response = await send(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: file,
  });
  return (await response.json()) as Published;
}

function summary(project: string, answer: Published): string {
  const files = answer.data_files.length;
  const data =
    files === 0
      ? ''
      : ` with ${files} data file${files === 1 ? '' : 's'}${answer.data_dir ? ` in ${answer.data_dir}` : ''}`;
  const check = { ok: 'every layer is valid', degraded: 'some layers have findings', broken: 'QGIS Server refuses it' };
  return `Project ${project} was ${answer.created ? 'published' : 'replaced'}${data}; its check says ${check[answer.check.status]}.`;
}

/** The layers the check of a published project found problems with, and why. */
function Troubles({ answer }: { answer: Published }): JSX.Element | null {
  const troubled = answer.check.layers.filter((layer) => layer.status !== 'ok');
  if (troubled.length === 0) return null;
  return (
    <ul class="layer-list" aria-label="Published layers with problems">
      {troubled.map((layer) => (
        <li key={layer.name}>
          <strong>{layer.name}</strong> ({layer.status}): {layer.findings.map((finding) => finding.message).join(' ')}
        </li>
      ))}
    </ul>
  );
}

interface PublishProps {
  /** The project to replace; the person names a new one when absent. */
  project?: string;
  schema?: string | undefined;
  onPublished: (project: string) => void;
}

export function PublishForm(props: PublishProps): JSX.Element {
  const [name, setName] = useState(props.project ?? '');
  const [file, setFile] = useState<File | undefined>(undefined);
  const [allowBroken, setAllowBroken] = useState(false);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [exists, setExists] = useState(false);
  const [published, setPublished] = useState<Published | undefined>(undefined);
  const project = props.project ?? name.trim();
  const publish = async (replace: boolean): Promise<void> => {
    if (!file) throw new Error('Choose a .qgs, .qgz or .zip file to publish.');
    if (project === '') throw new Error('The project needs a name.');
    setMessage(undefined);
    setPublished(undefined);
    try {
      const answer = await publishArchive(project, props.schema, file, { replace, allowBroken });
      setMessage(summary(project, answer));
      setPublished(answer);
      props.onPublished(project);
    } catch (error) {
      if (!replace && error instanceof ApiError && error.status === 409) return setExists(true);
      throw error;
    }
  };
  const upload = useAction(() => publish(false));
  return (
    <form
      class="form"
      aria-label={props.project ? `Replace ${props.project} from a file` : 'Publish a project file'}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void upload.run();
      }}
    >
      <div class="fields">
        {props.project === undefined && (
          <label>
            Project to create or replace
            <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </label>
        )}
        <label>
          Project file (.qgs, .qgz or .zip with its data)
          <input type="file" accept=".qgs,.qgz,.zip" onChange={(event) => setFile(event.currentTarget.files?.[0])} />
        </label>
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={allowBroken}
          onChange={(event) => setAllowBroken(event.currentTarget.checked)}
        />
        Store it even if some layers are broken
      </label>
      <ErrorMessage error={upload.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      {published && <Troubles answer={published} />}
      <div class="actions">
        <button type="submit" class="primary" disabled={upload.busy}>
          {upload.busy ? 'Publishing…' : props.project ? 'Replace the project' : 'Publish'}
        </button>
      </div>
      {exists && (
        <ConfirmDialog
          title={`Replace project “${project}”?`}
          confirm={`Replace ${project}`}
          cancel="Keep it"
          onConfirm={() => publish(true)}
          onClose={() => setExists(false)}
        >
          <p>
            A project named {project} exists already. Replacing it puts the file's layers, styles and settings in its
            place.
          </p>
        </ConfirmDialog>
      )}
    </form>
  );
}
