/**
 * A layer's datasource changed in place (`PATCH .../layers/{layer}` with `datasource`), as QGIS
 * Desktop's "Change Data Source": how a broken layer is fixed, its styles and every other property
 * kept. A source the API refuses (another kind of geometry, fields the styles read missing) is
 * said in its words, and the layer left as it was; one lacking fields may be taken all the same
 * (`?force=true`), once asked for by its own button.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { type LayerInfo } from '../api/layers';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { type Candidate, DatasourcePicker } from './datasource-picker';
import { Dialog } from './dialog';
import { ForceButton } from './force-button';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';

export function LayerSourceDialog(props: {
  project: ProjectRef;
  layer: LayerInfo;
  roots: string[];
  objectStorage: boolean;
  onClose: () => void;
  /** The layer reads `datasource` now. */
  onChanged: (datasource: string) => void;
}): JSX.Element {
  const { layer } = props;
  const [datasource, setDatasource] = useState('');
  const change = useAction(async (force: boolean) => {
    await api.patch('/api/projects/{project}/layers/{layer}', {
      path: { project: props.project.project, layer: layer.name },
      query: { ...schemaQuery(props.project), ...(force && { force: 'true' as const }) },
      body: { datasource },
    });
    props.onClose();
    props.onChanged(datasource);
  });
  const submit = (event: Event): void => {
    event.preventDefault();
    void change.run(false);
  };
  return (
    <Dialog title={`Source of ${layer.name}`} open onClose={props.onClose}>
      <form class="form" onSubmit={submit}>
        <p>
          Reads now: <code>{layer.source}</code>
          {!layer.valid && <span class="error-inline"> ({layer.invalid_reason ?? 'QGIS cannot open it'})</span>}
        </p>
        <p class="muted">
          Its styles, labels and every other property stay; the new source must hold the same kind of data
          {layer.type === 'vector' ? ' (points, lines or polygons as now)' : ''}.
        </p>
        <DatasourcePicker
          roots={props.roots}
          objectStorage={props.objectStorage}
          project={props.project.project}
          picked={datasource}
          onPick={(candidate: Candidate) => setDatasource(candidate.datasource)}
        />
        <label>
          New datasource
          <input required value={datasource} onInput={(event) => setDatasource(event.currentTarget.value)} />
        </label>
        <ErrorMessage error={change.error} />
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <ForceButton action={change} label="Change it all the same" />
          <button type="submit" class="primary" disabled={change.busy}>
            {change.busy ? 'Changing…' : 'Change the source'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
