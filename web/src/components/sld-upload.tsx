/**
 * "Upload SLD" in a layer's style card (`PUT .../layers/{layer}/styles/{style}/sld`): a style from
 * an SLD file as GeoServer and other servers write them, stored as QGIS reads it for the layer,
 * and made the layer's current style unless the person says otherwise.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, apiUrl, send } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

const ROUTE = '/api/projects/{project}/layers/{layer}/styles/{style}/sld';
type Uploaded = Answer<typeof ROUTE, 'put'>;

/** The style name a file suggests: its name without the extension. */
function styleNameOf(file: File): string {
  return file.name.replace(/\.(sld|xml)$/i, '');
}

async function uploadSld(ref: ProjectRef, layer: string, style: string, file: File, current: boolean) {
  const url = apiUrl(ROUTE, { project: ref.project, layer, style }, { ...schemaQuery(ref), current: String(current) });
  const response = await send(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.ogc.sld+xml' },
    body: file,
  });
  return (await response.json()) as Uploaded;
}

interface SldUploadProps {
  project: ProjectRef;
  layer: string;
  onChanged: () => void;
}

export function SldUpload(props: SldUploadProps): JSX.Element {
  const [file, setFile] = useState<File | undefined>(undefined);
  const [style, setStyle] = useState('');
  const [current, setCurrent] = useState(true);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const upload = useAction(async () => {
    if (!file) throw new Error('Choose an SLD file to upload.');
    if (style.trim() === '') throw new Error('The style needs a name.');
    setMessage(undefined);
    const answer = await uploadSld(props.project, props.layer, style.trim(), file, current);
    const done = `Style ${style.trim()} was ${answer.created ? 'created' : 'replaced'} from the SLD`;
    setMessage([`${done}${current ? ' and is the current style' : ''}.`, ...answer.warnings].join(' '));
    props.onChanged();
  });
  return (
    <form
      class="form"
      aria-label={`Upload an SLD style for ${props.layer}`}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void upload.run();
      }}
    >
      <div class="fields">
        <label>
          SLD file (SLD 1.0 or SE 1.1)
          <input
            type="file"
            accept=".sld,.xml"
            onChange={(event) => {
              const chosen = event.currentTarget.files?.[0];
              setFile(chosen);
              if (chosen && style === '') setStyle(styleNameOf(chosen));
            }}
          />
        </label>
        <label>
          Style name
          <input value={style} onInput={(event) => setStyle(event.currentTarget.value)} />
        </label>
      </div>
      <label class="check">
        <input type="checkbox" checked={current} onChange={(event) => setCurrent(event.currentTarget.checked)} />
        Make it the current style
      </label>
      <ErrorMessage error={upload.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={upload.busy}>
          {upload.busy ? 'Uploading…' : 'Upload SLD'}
        </button>
      </div>
    </form>
  );
}
