/**
 * Publishing a project from QGIS Desktop (`PUT /api/projects/{project}/archive`): a .qgs, a .qgz
 * or a zip bundle of the project and its data, chosen or dropped on the page, its upload followed
 * to the end. An existing project is replaced only once the person confirms it; broken layers are
 * refused unless the person asks to store them anyway.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, ApiError, apiUrl, putWithProgress } from '../api/client';
import { ConfirmDialog } from './confirm-dialog';
import { usePageDrop } from './file-drop';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

type Published = Answer<'/api/projects/{project}/archive', 'put'>;

interface PublishOptions {
  replace: boolean;
  allowBroken: boolean;
}

/** What the person chose to publish, and under which name. */
interface Upload {
  file: File;
  project: string;
}

export async function publishArchive(
  project: string,
  schema: string | undefined,
  file: File,
  options: PublishOptions,
  onProgress: (fraction: number) => void = () => undefined,
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
  return (await putWithProgress(url, file, onProgress)) as Published;
}

/** The files a project comes as, and the project a file names: `town.qgz` is project town. */
const PROJECT_FILE = /\.(qgs|qgz|zip)$/i;

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

/** How far the upload is: sent bytes as a bar, then Steward's check of the layers. */
function Progress(props: { fraction: number; file: string; done: boolean }): JSX.Element {
  const said = props.done
    ? 'Sent and checked.'
    : props.fraction < 1
      ? `${Math.round(props.fraction * 100)}% sent`
      : 'Sent; QGIS Server is checking each layer…';
  return (
    <p class="upload-progress">
      <progress max={1} value={props.fraction} aria-label={`Upload of ${props.file}`} />{' '}
      <span class="muted">{said}</span>
    </p>
  );
}

interface PublishProps {
  /** The project to replace; the person names a new one when absent. */
  project?: string;
  schema?: string | undefined;
  /** Publish a file dropped anywhere on the page, named after it unless a name is typed. */
  acceptDrops?: boolean;
  onPublished: (project: string) => void;
}

export function PublishForm(props: PublishProps): JSX.Element {
  const [name, setName] = useState(props.project ?? '');
  const [file, setFile] = useState<File | undefined>(undefined);
  const [allowBroken, setAllowBroken] = useState(false);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const [exists, setExists] = useState<Upload | undefined>(undefined);
  const [refused, setRefused] = useState<Upload | undefined>(undefined);
  const [progress, setProgress] = useState<{ file: string; fraction: number } | undefined>(undefined);
  const [published, setPublished] = useState<Published | undefined>(undefined);
  const publish = async (upload: Upload | undefined, options: PublishOptions): Promise<void> => {
    if (!upload) throw new Error('Choose a .qgs, .qgz or .zip file to publish.');
    if (!PROJECT_FILE.test(upload.file.name))
      throw new Error(
        `${upload.file.name} is not a project: publish a .qgs, a .qgz or a .zip of a project and its data.`,
      );
    if (upload.project === '') throw new Error('The project needs a name.');
    setMessage(undefined);
    setPublished(undefined);
    setRefused(undefined);
    const show = (fraction: number): void => setProgress({ file: upload.file.name, fraction });
    show(0);
    try {
      const answer = await publishArchive(upload.project, props.schema, upload.file, options, show);
      setMessage(summary(upload.project, answer));
      setPublished(answer);
      props.onPublished(upload.project);
    } catch (error) {
      setProgress(undefined);
      if (!options.replace && error instanceof ApiError && error.code === 'name_taken') return setExists(upload);
      if (!options.allowBroken && error instanceof ApiError && error.code === 'broken_layers') setRefused(upload);
      throw error;
    }
  };
  const upload = useAction(publish);
  const chosen = (): Upload | undefined => file && { file, project: props.project ?? name.trim() };
  const dragging = usePageDrop((dropped) => {
    if (upload.busy) return;
    const project = props.project ?? (name.trim() || dropped.name.replace(PROJECT_FILE, ''));
    if (PROJECT_FILE.test(dropped.name)) {
      setFile(dropped);
      setName(project);
    }
    void upload.run({ file: dropped, project }, { replace: false, allowBroken });
  }, props.acceptDrops === true);
  return (
    <form
      class="form"
      aria-label={props.project ? `Replace ${props.project} from a file` : 'Publish a project file'}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void upload.run(chosen(), { replace: false, allowBroken });
      }}
    >
      {props.acceptDrops && (
        <p class="muted">Or drop a .qgz, .qgs or .zip bundle anywhere on this page to publish it.</p>
      )}
      {dragging && (
        <div class="drop-overlay" aria-hidden="true">
          Drop the project file to publish it
        </div>
      )}
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
      {progress && (upload.busy || published) && (
        <Progress fraction={progress.fraction} file={progress.file} done={!upload.busy} />
      )}
      <ErrorMessage error={upload.error} />
      {refused && !upload.busy && (
        <p>
          <button type="button" onClick={() => void upload.run(refused, { replace: false, allowBroken: true })}>
            Publish {refused.file.name} anyway
          </button>
        </p>
      )}
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
          title={`Replace project “${exists.project}”?`}
          confirm={`Replace ${exists.project}`}
          cancel="Keep it"
          onConfirm={() => publish(exists, { replace: true, allowBroken })}
          onClose={() => setExists(undefined)}
        >
          <p>
            A project named {exists.project} exists already. Replacing it puts the file's layers, styles and settings in
            its place.
          </p>
        </ConfirmDialog>
      )}
    </form>
  );
}
