/**
 * What `GET /api/projects/{project}/check` finds: layers QGIS cannot load, missing files and fonts
 * of styles, unknown CRSs, what QGIS Server refuses; each with the reason in words.
 */
import type { JSX } from 'preact';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage, Loading } from './messages';
import { useApi } from './use-api';

const STATUS_WORDS = {
  ok: 'no problem found',
  degraded: 'some layers have problems',
  broken: 'QGIS Server refuses it',
};

function Badge({ status }: { status: 'ok' | 'degraded' | 'broken' }): JSX.Element {
  return <span class={`badge ${status === 'ok' ? 'ok' : 'broken'}`}>{status}</span>;
}

/** `version` changes when the layers change, to check again. */
export function ProjectCheck({ project, version }: { project: ProjectRef; version: unknown }): JSX.Element {
  const check = useApi(
    (signal) =>
      api.get('/api/projects/{project}/check', {
        path: { project: project.project },
        query: schemaQuery(project),
        signal,
      }),
    [project.project, project.schema, version],
  );
  const result = check.data;
  const troubled = result?.layers.filter((layer) => layer.status !== 'ok') ?? [];
  return (
    <section class="card" aria-labelledby="check-title">
      <h2 id="check-title">Project check</h2>
      <ErrorMessage error={check.error} />
      {!result && check.loading && <Loading what="the project check" />}
      {result && (
        <>
          <p>
            <Badge status={result.status} /> {STATUS_WORDS[result.status]}
            {result.layers.length > 0 &&
              ` (${result.layers.length - troubled.length} of ${result.layers.length} layers ok)`}
            .
          </p>
          {result.findings.length > 0 && (
            <ul aria-label="Findings about the project">
              {result.findings.map((finding, index) => (
                <li key={index}>
                  {finding.kind}: {finding.message}
                </li>
              ))}
            </ul>
          )}
          {troubled.length > 0 && (
            <ul class="layer-list" aria-label="Layers with problems">
              {troubled.map((layer) => (
                <li key={layer.name}>
                  <strong>{layer.name}</strong> <Badge status={layer.status} />
                  <ul>
                    {layer.findings.map((finding, index) => (
                      <li key={index}>
                        {finding.kind}: {finding.message}
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
