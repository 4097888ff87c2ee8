/**
 * What `GET /api/projects/{project}/check` finds: layers QGIS cannot load, missing files and fonts
 * of styles, unknown CRSs, what QGIS Server refuses; each with the reason in words.
 */
import type { JSX } from 'preact';

import { type Answer, api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { ErrorMessage, Loading } from './messages';
import { useApi } from './use-api';

type Check = Answer<'/api/projects/{project}/check'>;
export type CheckStatus = Check['status'];

export const STATUS_WORDS: Record<CheckStatus, string> = {
  ok: 'no problem found',
  degraded: 'some layers have problems',
  broken: 'QGIS Server refuses it',
};

/** `2 of 3 layers ok`. */
export function layersOk(check: Check): string {
  const ok = check.layers.filter((layer) => layer.status === 'ok').length;
  return `${ok} of ${check.layers.length} layer${check.layers.length === 1 ? '' : 's'} ok`;
}

export function Badge({ status }: { status: CheckStatus }): JSX.Element {
  return <span class={`badge ${status === 'ok' ? 'ok' : 'broken'}`}>{status}</span>;
}

/**
 * What a check found about the project as a whole, and each layer with problems with the reasons;
 * `project` names it where several are listed.
 */
export function CheckFindings({ check, project }: { check: Check; project?: string }): JSX.Element {
  const troubled = check.layers.filter((layer) => layer.status !== 'ok');
  const of = project === undefined ? '' : ` ${project}`;
  return (
    <>
      {check.findings.length > 0 && (
        <ul aria-label={`Findings about the project${of}`}>
          {check.findings.map((finding, index) => (
            <li key={index}>
              {finding.kind}: {finding.message}
            </li>
          ))}
        </ul>
      )}
      {troubled.length > 0 && (
        <ul class="layer-list" aria-label={`Layers with problems${project === undefined ? '' : ` in ${project}`}`}>
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
  );
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
  return (
    <section class="card" aria-labelledby="check-title">
      <h2 id="check-title">Project check</h2>
      <ErrorMessage error={check.error} />
      {!result && check.loading && <Loading what="the project check" />}
      {result && (
        <>
          <p>
            <Badge status={result.status} /> {STATUS_WORDS[result.status]}
            {result.layers.length > 0 && ` (${layersOk(result)})`}.
          </p>
          <CheckFindings check={result} />
        </>
      )}
    </section>
  );
}
