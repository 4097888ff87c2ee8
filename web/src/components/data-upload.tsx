/**
 * Uploads a data file from the add-layer dialog into the project's folder of the upload root
 * (`PUT /api/data/{project}/{file}`, kept only when GDAL opens it), then shows that folder to pick
 * the file's layer from. Layers may read a file already there: it is replaced only when asked again.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { ApiError, putWithProgress, send } from '../api/client';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

const dataUrl = (...segments: string[]): string => `/api/data/${segments.map(encodeURIComponent).join('/')}`;

/** The names in the project's folder of the upload root; none when it has no folder yet. */
async function namesIn(project: string): Promise<string[]> {
  try {
    const entries = (await (await send(dataUrl(project))).json()) as Array<{ name: string }>;
    return entries.map((entry) => entry.name);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return [];
    throw error;
  }
}

export function DataUpload(props: { project: string; onUploaded: (folder: string) => void }): JSX.Element {
  const [file, setFile] = useState<File | undefined>(undefined);
  const [replacing, setReplacing] = useState<string | undefined>(undefined);
  const [progress, setProgress] = useState<number | undefined>(undefined);
  const [said, setSaid] = useState<string | undefined>(undefined);
  const upload = useAction(async () => {
    setSaid(undefined);
    if (!file) throw new Error('Choose a file to upload first.');
    if (replacing !== file.name && (await namesIn(props.project)).includes(file.name)) {
      setReplacing(file.name);
      return;
    }
    setProgress(0);
    try {
      const answer = (await putWithProgress(dataUrl(props.project, file.name), file, setProgress)) as { path: string };
      setReplacing(undefined);
      setSaid(`${file.name} is uploaded: pick its layer below.`);
      props.onUploaded(answer.path.slice(0, answer.path.lastIndexOf('/')));
    } finally {
      setProgress(undefined);
    }
  });
  const asking = replacing !== undefined && replacing === file?.name;
  return (
    <div class="inline-form" role="group" aria-label="Upload a data file">
      <label for="data-file">Upload a data file to this project’s folder</label>
      <input
        id="data-file"
        type="file"
        onChange={(event) => {
          setFile(event.currentTarget.files?.[0]);
          setReplacing(undefined);
        }}
      />
      <button type="button" onClick={() => void upload.run()} disabled={upload.busy}>
        {asking ? `Replace ${replacing}` : 'Upload'}
      </button>
      {progress !== undefined && (
        <progress max={1} value={progress} aria-label={`Uploading ${file?.name ?? ''}`}>
          {Math.round(progress * 100)} %
        </progress>
      )}
      {asking && (
        <p role="alert">
          {replacing} is already in this project’s folder, and layers may read it: choose “Replace {replacing}” to
          upload over it, or rename the file.
        </p>
      )}
      <ErrorMessage error={upload.error} />
      {said && (
        <p role="status" class="muted">
          {said}
        </p>
      )}
    </div>
  );
}
