/**
 * A layer's styles (docs/styles.md): which one it draws with, switching to another, each as QML and
 * the current one as SLD to download, a QML document or a style package (zip) uploaded into the
 * layer (one reading fields the layer lacks taken only when asked again), and a style deleted from
 * the project once confirmed.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api, apiUrl, send } from '../api/client';
import { saveDownload } from '../api/downloads';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ConfirmDialog } from './confirm-dialog';
import { Dialog } from './dialog';
import { ForceButton } from './force-button';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

interface StylesProps {
  project: ProjectRef;
  layer: string;
  styles: string[];
  current: string;
  /** Whether the styles may be switched, uploaded and deleted; else they are only listed and downloaded. */
  mayWrite: boolean;
  onClose: () => void;
  /** A style was switched, added or deleted: the layer is to be read again. */
  onChanged: () => void;
}

/** A style uploaded for the layer: its name, its QML or package (by its `.zip` name) and how it is given. */
interface Upload {
  name: string;
  file: File;
  current: boolean;
  /** Stores it though the layer lacks fields it reads. */
  force: boolean;
}

/**
 * Puts the style into the project and the layer's style manager in one request, so that the API
 * checks it against the layer's fields and a refusal leaves neither changed; its warnings.
 */
async function uploadStyle(props: StylesProps, upload: Upload): Promise<string[]> {
  const zip = upload.file.name.toLowerCase().endsWith('.zip');
  const url = apiUrl(
    zip ? '/api/projects/{project}/styles/{style}/package' : '/api/projects/{project}/styles/{style}/qml',
    { project: props.project.project, style: upload.name },
    {
      ...schemaQuery(props.project),
      layer: props.layer,
      current: String(upload.current),
      ...(upload.force && { force: 'true' }),
    },
  );
  const response = await send(url, {
    method: 'PUT',
    headers: { 'content-type': zip ? 'application/zip' : 'application/xml' },
    body: upload.file,
  });
  return ((await response.json()) as { warnings: string[] }).warnings;
}

function layerStyleSetter(props: StylesProps) {
  return (name: string, current: boolean) =>
    api.post('/api/projects/{project}/layers/{layer}/style', {
      path: { project: props.project.project, layer: props.layer },
      query: schemaQuery(props.project),
      body: { name, current },
    });
}

function UploadForm(props: StylesProps & { onDone: (said: string) => void }): JSX.Element {
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | undefined>(undefined);
  const [current, setCurrent] = useState(true);
  const upload = useAction(async (force: boolean) => {
    if (!file) throw new Error('Choose a .qml or .zip file first.');
    const warnings = await uploadStyle(props, { name, file, current, force });
    props.onChanged();
    props.onDone(`Style ${name} uploaded${warnings.length > 0 ? ` (warnings: ${warnings.join('; ')})` : ''}.`);
  });
  return (
    <form
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        void upload.run(false);
      }}
    >
      <h3>Upload a style</h3>
      <div class="fields">
        <label>
          Style name
          <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          QML document or style package (.qml, .zip)
          <input
            type="file"
            required
            accept=".qml,.zip"
            onChange={(event) => setFile(event.currentTarget.files?.[0])}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={current} onChange={(event) => setCurrent(event.currentTarget.checked)} />
          Draw the layer with it
        </label>
      </div>
      <ErrorMessage error={upload.error} />
      <div class="actions">
        <ForceButton action={upload} label="Upload it all the same" />
        <button type="submit" class="primary" disabled={upload.busy}>
          {upload.busy ? 'Uploading…' : 'Upload the style'}
        </button>
      </div>
    </form>
  );
}

export function LayerStyles(props: StylesProps): JSX.Element {
  const { project, layer } = props;
  const [said, setSaid] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState<string | undefined>(undefined);
  const apply = layerStyleSetter(props);
  const use = useAction(async (name: string) => {
    await apply(name, true);
    props.onChanged();
    setSaid(`${layer} is drawn with ${name}.`);
  });
  const download = useAction(async (url: string, fallback: string) =>
    setSaid(`Saved ${await saveDownload(url, fallback)}.`),
  );
  const qml = (style: string) =>
    apiUrl(
      '/api/projects/{project}/styles/{style}/qml',
      { project: project.project, style },
      { ...schemaQuery(project), layer },
    );
  const sld = apiUrl(
    '/api/projects/{project}/layers/{layer}/style.sld',
    { project: project.project, layer },
    schemaQuery(project),
  );
  return (
    <Dialog title={`Styles of ${layer}`} open onClose={props.onClose}>
      <ul class="layer-list">
        {props.styles.map((style) => (
          <li key={style} class="style-row" data-testid={`style-${style}`}>
            <strong>{style}</strong> {style === props.current && <span class="badge ok">current</span>}
            <div class="row-actions">
              {props.mayWrite && style !== props.current && (
                <button
                  type="button"
                  disabled={use.busy}
                  onClick={() => void use.run(style)}
                  aria-label={`Draw ${layer} with ${style}`}
                >
                  Use
                </button>
              )}
              <button
                type="button"
                onClick={() => void download.run(qml(style), `${style}.qml`)}
                aria-label={`Download ${style} as QML`}
              >
                QML
              </button>
              {style === props.current && (
                <button
                  type="button"
                  onClick={() => void download.run(sld, `${layer}.sld`)}
                  aria-label={`Download ${style} as SLD`}
                >
                  SLD
                </button>
              )}
              {props.mayWrite && style !== props.current && (
                <button
                  type="button"
                  class="danger"
                  onClick={() => setDeleting(style)}
                  aria-label={`Delete style ${style}`}
                >
                  Delete…
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
      {said && (
        <p role="status" class="muted">
          {said}
        </p>
      )}
      <ErrorMessage error={use.error ?? download.error} />
      {props.mayWrite && <UploadForm {...props} onDone={setSaid} />}
      <div class="dialog-actions">
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {deleting && (
        <ConfirmDialog
          title={`Delete style “${deleting}”?`}
          confirm={`Delete ${deleting}`}
          cancel="Keep it"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.delete('/api/projects/{project}/styles/{style}', {
              path: { project: project.project, style: deleting },
              query: schemaQuery(project),
            });
            setSaid(`Style ${deleting} was deleted.`);
            props.onChanged();
          }}
        >
          <p>
            The style leaves project {project.project}, with every layer that has it: download it as QML first to keep a
            copy.
          </p>
        </ConfirmDialog>
      )}
    </Dialog>
  );
}
