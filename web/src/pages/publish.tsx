/**
 * A project in and out as QGIS Desktop has it (docs/publishing.md): its .qgz, a zip of it with its
 * layers' data files, and its replacement by a file published from Desktop.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { apiUrl } from '../api/client';
import { saveDownload } from '../api/downloads';
import { type ProjectRef, projectRef, schemaQuery } from '../api/projects';
import { ErrorMessage } from '../components/messages';
import { Page } from '../components/page';
import { ProjectTabs } from '../components/project-tabs';
import { PublishForm } from '../components/publish-form';
import { useMayWrite } from '../components/use-access';
import { useAction } from '../components/use-api';
import type { PageProps } from '../routes';

/** Fetches the archive with the token and saves it as a download. */
function download(ref: ProjectRef, data: boolean): Promise<string> {
  const url = apiUrl(
    '/api/projects/{project}/archive',
    { project: ref.project },
    { ...schemaQuery(ref), ...(data ? { data: 'true' } : {}) },
  );
  return saveDownload(url, `${ref.project}${data ? '.zip' : '.qgz'}`);
}

export default function PublishPage({ params, query }: PageProps): JSX.Element {
  const ref = projectRef(params, query);
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const mayWrite = useMayWrite(ref);
  const fetchArchive = useAction(async (data: boolean) => setSaved(await download(ref, data)));
  return (
    <Page title={`${ref.project}: publish`}>
      <ProjectTabs project={ref} current="/publish" />
      <div class="grid-2">
        <section class="card" aria-labelledby="download-title">
          <h2 id="download-title">Download</h2>
          <p>
            Open the project in QGIS Desktop: the .qgz alone reads the data where Steward does; the zip brings the data
            files along, with paths made relative.
          </p>
          <div class="actions">
            <button type="button" disabled={fetchArchive.busy} onClick={() => void fetchArchive.run(false)}>
              Download the .qgz
            </button>
            <button type="button" disabled={fetchArchive.busy} onClick={() => void fetchArchive.run(true)}>
              Download a zip with the data
            </button>
          </div>
          <ErrorMessage error={fetchArchive.error} />
          {saved && (
            <p role="status" class="muted">
              Saved as {saved}.
            </p>
          )}
        </section>
        {mayWrite && (
          <section class="card" aria-labelledby="replace-title">
            <h2 id="replace-title">Replace from QGIS Desktop</h2>
            <PublishForm project={ref.project} schema={ref.schema} onPublished={() => undefined} />
          </section>
        )}
      </div>
    </Page>
  );
}
