/**
 * A layer's properties (`GET .../layers/{layer}/properties`, `PATCH .../layers/{layer}`): what QGIS
 * Server publishes of it (title, abstract, keywords, short name, attribution), its opacity and
 * blending, and the scales it is drawn at. Only the fields changed are sent.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api, type Body } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { Dialog } from './dialog';
import { ErrorMessage, Loading } from './messages';
import { useAction, useApi } from './use-api';

type Properties = Answer<'/api/projects/{project}/layers/{layer}/properties'>;
type Change = NonNullable<Body<'/api/projects/{project}/layers/{layer}', 'patch'>>;

const BLENDING: Properties['blending'][] = [
  'normal',
  'lighten',
  'screen',
  'dodge',
  'addition',
  'darken',
  'multiply',
  'burn',
];

interface DialogProps {
  project: ProjectRef;
  layer: string;
  onClose: () => void;
  onSaved: () => void;
}

export function LayerPropertiesDialog(props: DialogProps): JSX.Element {
  const options = { path: { project: props.project.project, layer: props.layer }, query: schemaQuery(props.project) };
  const loaded = useApi(
    (signal) => api.get('/api/projects/{project}/layers/{layer}/properties', { ...options, signal }),
    [props.layer],
  );
  return (
    <Dialog title={`Properties of ${props.layer}`} open onClose={props.onClose}>
      <div>
        {loaded.data ? (
          <PropertiesForm {...props} start={loaded.data} />
        ) : (
          <>
            <ErrorMessage error={loaded.error} />
            {!loaded.error && <Loading what="the layer's properties" />}
            <div class="dialog-actions">
              <button type="button" onClick={props.onClose}>
                Close
              </button>
            </div>
          </>
        )}
      </div>
    </Dialog>
  );
}

/** The fields whose value differs from what was read. */
function changes(start: Properties, now: Properties): Change {
  const change: Record<string, unknown> = {};
  for (const key of Object.keys(now) as (keyof Properties)[]) {
    if (JSON.stringify(now[key]) !== JSON.stringify(start[key])) change[key] = now[key];
  }
  return change;
}

function scale(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0)
    throw new Error(`A scale is a number of 0 or more (its denominator, 25000 for 1:25000), not “${text}”.`);
  return value;
}

function PropertiesForm(props: DialogProps & { start: Properties }): JSX.Element {
  const { start } = props;
  const [title, setTitle] = useState(start.title);
  const [abstract, setAbstract] = useState(start.abstract);
  const [keywords, setKeywords] = useState(start.keywords.join(', '));
  const [shortName, setShortName] = useState(start.short_name);
  const [opacity, setOpacity] = useState(String(Math.round(start.opacity * 100)));
  const [blending, setBlending] = useState(start.blending);
  const [byScale, setByScale] = useState(start.scale_based_visibility);
  const [minScale, setMinScale] = useState(String(start.min_scale));
  const [maxScale, setMaxScale] = useState(String(start.max_scale));
  const [message, setMessage] = useState<string | undefined>(undefined);
  const save = useAction(async () => {
    const now: Properties = {
      ...start,
      title,
      abstract,
      keywords: keywords
        .split(',')
        .map((word) => word.trim())
        .filter(Boolean),
      short_name: shortName.trim(),
      opacity: Number(opacity) / 100,
      blending,
      scale_based_visibility: byScale,
      min_scale: scale(minScale),
      max_scale: scale(maxScale),
    };
    const body = changes(start, now);
    if (Object.keys(body).length === 0) return setMessage('Nothing changed.');
    await api.patch('/api/projects/{project}/layers/{layer}', {
      path: { project: props.project.project, layer: props.layer },
      query: schemaQuery(props.project),
      body,
    });
    props.onSaved();
    props.onClose();
  });
  return (
    <form
      class="form"
      aria-label={`Properties of ${props.layer}`}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <div class="fields stacked">
        <label>
          Title
          <input value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
        </label>
        <label>
          Abstract
          <textarea rows={3} value={abstract} onInput={(event) => setAbstract(event.currentTarget.value)} />
        </label>
        <label>
          Keywords (separated by commas)
          <input value={keywords} onInput={(event) => setKeywords(event.currentTarget.value)} />
        </label>
        <label>
          Short name (published name)
          <input value={shortName} onInput={(event) => setShortName(event.currentTarget.value)} />
        </label>
        <label>
          Opacity (%)
          <input
            type="number"
            min={0}
            max={100}
            value={opacity}
            onInput={(event) => setOpacity(event.currentTarget.value)}
          />
        </label>
        <label>
          Blending
          <select
            value={blending}
            onChange={(event) => setBlending(event.currentTarget.value as Properties['blending'])}
          >
            {BLENDING.map((mode) => (
              <option key={mode} value={mode}>
                {mode}
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={byScale} onChange={(event) => setByScale(event.currentTarget.checked)} />
          Drawn only between two scales
        </label>
        {byScale && (
          <>
            <label>
              Most zoomed out scale (1:…)
              <input inputMode="numeric" value={minScale} onInput={(event) => setMinScale(event.currentTarget.value)} />
            </label>
            <label>
              Most zoomed in scale (1:…, 0 for no bound)
              <input inputMode="numeric" value={maxScale} onInput={(event) => setMaxScale(event.currentTarget.value)} />
            </label>
          </>
        )}
      </div>
      <ErrorMessage error={save.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save properties'}
        </button>
      </div>
    </form>
  );
}
