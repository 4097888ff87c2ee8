/**
 * A project's service settings (`GET`/`PATCH .../services`), by service, as QGIS Desktop's Project
 * Properties > QGIS Server shows them. Only the fields changed are sent.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { api } from '../api/client';
import { type ProjectRef, schemaQuery } from '../api/projects';
import { type ServicesAnswer, servicesChange, type Settings, toggled, words } from '../api/service-settings';
import { gridRows, gridsOf, sameGrids } from '../api/wmts-grids';
import { ErrorMessage } from './messages';
import { useAction } from './use-api';
import { WmtsGrids } from './wmts-grids';

export interface Layer {
  name: string;
  type: string | undefined;
}

type Edit = (change: (draft: Settings) => Settings) => void;

function settingsOf({ endpoints: _endpoints, ogcapi_features: _ogc, ...settings }: ServicesAnswer): Settings {
  return settings;
}

/** A size in pixels or empty for none; anything else is said in words. */
function size(label: string, text: string, max: number): number | null {
  if (text.trim() === '') return null;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new Error(`${label} is a whole number from 1 to ${max}, or empty for none, not “${text}”.`);
  return value;
}

/** The advertised extent: four numbers, or empty for the layers'. */
function extentOf(text: string): [number, number, number, number] | null {
  if (text.trim() === '') return null;
  const numbers = text.split(',').map((part) => Number(part.trim()));
  const [xmin = 0, ymin = 0, xmax = 0, ymax = 0] = numbers;
  if (numbers.length !== 4 || !numbers.every(Number.isFinite) || xmin >= xmax || ymin >= ymax)
    throw new Error(
      `The advertised extent is four numbers xmin, ymin, xmax, ymax with min below max, or empty, not “${text}”.`,
    );
  return [xmin, ymin, xmax, ymax];
}

/** The decimals of feature info geometries: 0 to 17. */
function decimals(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value) || value < 0 || value > 17)
    throw new Error(`The feature info precision is a whole number from 0 to 17, not “${text}”.`);
  return value;
}

export function ServicesForm(props: {
  project: ProjectRef;
  start: ServicesAnswer;
  layers: Layer[];
  /** The project's groups, which WMTS may publish. */
  groups: string[];
  onSaved: (answer: ServicesAnswer) => void;
}): JSX.Element {
  const [start, setStart] = useState<Settings>(() => settingsOf(props.start));
  const [draft, setDraft] = useState<Settings>(start);
  const [maxWidth, setMaxWidth] = useState(String(start.wms.max_width ?? ''));
  const [maxHeight, setMaxHeight] = useState(String(start.wms.max_height ?? ''));
  const [quality, setQuality] = useState(String(start.wms.image_quality ?? ''));
  const [precision, setPrecision] = useState(String(start.wms.feature_info.precision));
  const [crs, setCrs] = useState(start.wms.crs.join(', '));
  const [extent, setExtent] = useState(start.wms.extent?.join(', ') ?? '');
  const [keywords, setKeywords] = useState(start.keywords.join(', '));
  const [grids, setGrids] = useState(() => gridRows(start.wmts.grids));
  const [message, setMessage] = useState<string | undefined>(undefined);
  const edit: Edit = (change) => setDraft((current) => change(current));
  const save = useAction(async () => {
    setMessage(undefined);
    const now: Settings = {
      ...draft,
      keywords: words(keywords),
      wms: {
        ...draft.wms,
        crs: words(crs),
        extent: extentOf(extent),
        max_width: size('The maximum width', maxWidth, 1000000),
        max_height: size('The maximum height', maxHeight, 1000000),
        image_quality: size('The image quality', quality, 100),
        feature_info: { ...draft.wms.feature_info, precision: decimals(precision) },
      },
    };
    const requested = gridsOf(grids);
    const body = servicesChange(start, now);
    if (!sameGrids(requested, start.wmts.grids)) body.wmts = { ...body.wmts, grids: requested };
    if (Object.keys(body).length === 0) return setMessage('Nothing changed.');
    const answer = await api.patch('/api/projects/{project}/services', {
      path: { project: props.project.project },
      query: schemaQuery(props.project),
      body,
    });
    setStart(settingsOf(answer));
    setDraft(settingsOf(answer));
    setGrids(gridRows(answer.wmts.grids));
    props.onSaved(answer);
    setMessage(`Saved: ${Object.keys(body).join(', ')}.`);
  });
  const vectors = props.layers.filter((layer) => layer.type === 'vector').map((layer) => layer.name);
  const rasters = props.layers.filter((layer) => layer.type === 'raster').map((layer) => layer.name);
  return (
    <form
      class="form"
      aria-label="Service settings"
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <DescriptionFields draft={draft} edit={edit} keywords={keywords} setKeywords={setKeywords} />
      <fieldset class="card">
        <legend>WMS</legend>
        <div class="fields stacked">
          <label>
            Advertised CRSs (separated by commas; empty: the project’s, EPSG:4326 and EPSG:3857)
            <input value={crs} onInput={(event) => setCrs(event.currentTarget.value)} />
          </label>
          <label>
            Advertised extent (xmin, ymin, xmax, ymax in the project’s CRS; empty: the layers’)
            <input value={extent} onInput={(event) => setExtent(event.currentTarget.value)} />
          </label>
          <label>
            Maximum width (pixels; empty: no limit)
            <input inputMode="numeric" value={maxWidth} onInput={(event) => setMaxWidth(event.currentTarget.value)} />
          </label>
          <label>
            Maximum height (pixels; empty: no limit)
            <input inputMode="numeric" value={maxHeight} onInput={(event) => setMaxHeight(event.currentTarget.value)} />
          </label>
          <label>
            JPEG image quality (1 to 100; empty: QGIS Server’s default)
            <input inputMode="numeric" value={quality} onInput={(event) => setQuality(event.currentTarget.value)} />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={draft.wms.use_layer_ids}
              onChange={(event) => {
                const on = event.currentTarget.checked;
                edit((d) => ({ ...d, wms: { ...d.wms, use_layer_ids: on } }));
              }}
            />
            Name layers by their ids
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={draft.wms.feature_info.geometry}
              onChange={(event) => {
                const on = event.currentTarget.checked;
                edit((d) => ({ ...d, wms: { ...d.wms, feature_info: { ...d.wms.feature_info, geometry: on } } }));
              }}
            />
            Add the geometry to feature info
          </label>
          <FeatureInfoCheck
            draft={draft}
            edit={edit}
            option="segmentize"
            label="Segmentize curved geometries in feature info"
          />
          <FeatureInfoCheck
            draft={draft}
            edit={edit}
            option="use_form_settings"
            label="Feature info fields as the attribute form shows them"
          />
          <label>
            Feature info geometry precision (decimals, 0 to 17)
            <input inputMode="numeric" value={precision} onInput={(event) => setPrecision(event.currentTarget.value)} />
          </label>
        </div>
      </fieldset>
      <WfsFields draft={draft} edit={edit} vectors={vectors} />
      <LayerChoice
        legend="WCS: published rasters"
        names={rasters}
        chosen={draft.wcs.layers}
        none="The project has no raster layer."
        onToggle={(name, on) => edit((d) => ({ ...d, wcs: { ...d.wcs, layers: toggled(d.wcs.layers, name, on) } }))}
      />
      <WmtsFields draft={draft} edit={edit} layers={props.layers.map((layer) => layer.name)} groups={props.groups} />
      <WmtsGrids rows={grids} onChange={setGrids} />
      <AdvertisedUrls draft={draft} edit={edit} />
      <ContactFields draft={draft} edit={edit} />
      <ErrorMessage error={save.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save service settings'}
        </button>
      </div>
    </form>
  );
}

function TextField(props: { label: string; value: string; onInput: (value: string) => void }): JSX.Element {
  return (
    <label>
      {props.label}
      <input value={props.value} onInput={(event) => props.onInput(event.currentTarget.value)} />
    </label>
  );
}

function DescriptionFields(props: {
  draft: Settings;
  edit: Edit;
  keywords: string;
  setKeywords: (value: string) => void;
}): JSX.Element {
  const { draft, edit } = props;
  const text = (key: 'title' | 'fees' | 'access_constraints' | 'online_resource') => (value: string) =>
    edit((d) => ({ ...d, [key]: value }));
  return (
    <fieldset class="card">
      <legend>Service description</legend>
      <div class="fields stacked">
        <TextField label="Title" value={draft.title} onInput={text('title')} />
        <label>
          Abstract
          <textarea
            rows={3}
            value={draft.abstract}
            onInput={(event) => {
              const value = event.currentTarget.value;
              edit((d) => ({ ...d, abstract: value }));
            }}
          />
        </label>
        <TextField label="Keywords (separated by commas)" value={props.keywords} onInput={props.setKeywords} />
        <TextField label="Online resource" value={draft.online_resource} onInput={text('online_resource')} />
        <TextField label="Fees" value={draft.fees} onInput={text('fees')} />
        <TextField label="Access constraints" value={draft.access_constraints} onInput={text('access_constraints')} />
        <label class="check">
          <input
            type="checkbox"
            checked={draft.advertised}
            onChange={(event) => {
              const on = event.currentTarget.checked;
              edit((d) => ({ ...d, advertised: on }));
            }}
          />
          Capabilities tell the contact, fees and constraints
        </label>
      </div>
    </fieldset>
  );
}

/** The URL each service's capabilities advertise, as Desktop's "Advertised URL" fields; empty: the address asked at. */
function AdvertisedUrls({ draft, edit }: { draft: Settings; edit: Edit }): JSX.Element {
  const services = ['wms', 'wfs', 'wcs', 'wmts'] as const;
  return (
    <fieldset class="card">
      <legend>Advertised URLs</legend>
      <p class="muted">
        Where each service’s capabilities send clients, and where the URLs above point: empty, the address QGIS Server
        was asked at (the public one when STEWARD_PUBLIC_OWS_URL is set).
      </p>
      <div class="fields stacked">
        {services.map((service) => (
          <TextField
            key={service}
            label={`${service.toUpperCase()} advertised URL`}
            value={draft[service].url}
            onInput={(url) => edit((d) => ({ ...d, [service]: { ...d[service], url } }))}
          />
        ))}
      </div>
    </fieldset>
  );
}

function ContactFields({ draft, edit }: { draft: Settings; edit: Edit }): JSX.Element {
  const fields = [
    ['person', 'Contact person'],
    ['organization', 'Organization'],
    ['position', 'Position'],
    ['mail', 'E-mail'],
    ['phone', 'Phone'],
  ] as const;
  return (
    <fieldset class="card">
      <legend>Contact</legend>
      <div class="fields stacked">
        {fields.map(([key, label]) => (
          <TextField
            key={key}
            label={label}
            value={draft.contact[key]}
            onInput={(value) => edit((d) => ({ ...d, contact: { ...d.contact, [key]: value } }))}
          />
        ))}
      </div>
    </fieldset>
  );
}

function LayerChoice(props: {
  legend: string;
  names: string[];
  chosen: string[];
  none: string;
  onToggle: (name: string, on: boolean) => void;
}): JSX.Element {
  return (
    <fieldset class="card">
      <legend>{props.legend}</legend>
      {props.names.length === 0 && <p class="muted">{props.none}</p>}
      {props.names.map((name) => (
        <label key={name} class="check">
          <input
            type="checkbox"
            checked={props.chosen.includes(name)}
            onChange={(event) => props.onToggle(name, event.currentTarget.checked)}
          />
          {name}
        </label>
      ))}
    </fieldset>
  );
}

const TRANSACTIONS = ['insert', 'update', 'delete'] as const;

/** WFS: each vector layer published or not, and the transactions allowed on it. */
const DECIMALS = Array.from({ length: 18 }, (_, index) => index);

function WfsFields({ draft, edit, vectors }: { draft: Settings; edit: Edit; vectors: string[] }): JSX.Element {
  const publish = (name: string, on: boolean): void =>
    edit((d) => {
      const wfs = { ...d.wfs, layers: toggled(d.wfs.layers, name, on) };
      // Unpublishing takes the layer's transactions away, as Desktop unchecks them.
      if (!on) {
        for (const kind of TRANSACTIONS) wfs[kind] = toggled(wfs[kind], name, false);
        wfs.precision = Object.fromEntries(Object.entries(wfs.precision).filter(([layer]) => layer !== name));
      }
      return { ...d, wfs };
    });
  return (
    <fieldset class="card">
      <legend>WFS: published vector layers</legend>
      {vectors.length === 0 && <p class="muted">The project has no vector layer.</p>}
      <ul class="service-layers">
        {vectors.map((name) => {
          const published = draft.wfs.layers.includes(name);
          return (
            <li key={name}>
              <label class="check">
                <input
                  type="checkbox"
                  checked={published}
                  onChange={(event) => publish(name, event.currentTarget.checked)}
                />
                <strong>{name}</strong>
                <span class="visually-hidden"> published through WFS</span>
              </label>
              {TRANSACTIONS.map((kind) => (
                <label key={kind} class="check">
                  <input
                    type="checkbox"
                    disabled={!published}
                    checked={draft.wfs[kind].includes(name)}
                    onChange={(event) => {
                      const on = event.currentTarget.checked;
                      edit((d) => ({ ...d, wfs: { ...d.wfs, [kind]: toggled(d.wfs[kind], name, on) } }));
                    }}
                  />
                  {kind}
                  <span class="visually-hidden"> {name}</span>
                </label>
              ))}
              <label>
                precision
                <span class="visually-hidden"> of {name}</span>
                <select
                  disabled={!published}
                  value={String(draft.wfs.precision[name] ?? '')}
                  onChange={(event) => {
                    const value = Number(event.currentTarget.value);
                    edit((d) => ({ ...d, wfs: { ...d.wfs, precision: { ...d.wfs.precision, [name]: value } } }));
                  }}
                >
                  {draft.wfs.precision[name] === undefined && <option value="">6 (default)</option>}
                  {DECIMALS.map((decimals) => (
                    <option key={decimals} value={String(decimals)}>
                      {decimals}
                    </option>
                  ))}
                </select>
              </label>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

function FeatureInfoCheck(props: {
  draft: Settings;
  edit: Edit;
  option: 'segmentize' | 'use_form_settings';
  label: string;
}): JSX.Element {
  const { option } = props;
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={props.draft.wms.feature_info[option]}
        onChange={(event) => {
          const on = event.currentTarget.checked;
          props.edit((d) => ({ ...d, wms: { ...d.wms, feature_info: { ...d.wms.feature_info, [option]: on } } }));
        }}
      />
      {props.label}
    </label>
  );
}

const TILE_FORMATS = [
  ['image/png', 'PNG'],
  ['image/jpeg', 'JPEG'],
] as const;
type TileFormat = (typeof TILE_FORMATS)[number][0];
type Wmts = Settings['wmts'];

/** `wmts` with `name` (a layer or group; the project is "") published or not: its formats go with it. */
function publishedTiles(wmts: Wmts, list: 'layers' | 'groups', name: string, on: boolean): Wmts {
  const formats = on ? wmts.formats : Object.fromEntries(Object.entries(wmts.formats).filter(([key]) => key !== name));
  return { ...wmts, [list]: toggled(wmts[list], name, on), formats };
}

/** The tile formats of `name`: PNG and JPEG unless set, as Desktop publishes them. */
function formatsOf(wmts: Wmts, name: string): TileFormat[] {
  return wmts.formats[name] ?? TILE_FORMATS.map(([format]) => format);
}

/** WMTS: the whole project, groups and layers published as tiles, and the formats of each. */
function WmtsFields(props: { draft: Settings; edit: Edit; layers: string[]; groups: string[] }): JSX.Element {
  const { draft, edit } = props;
  const wmts = draft.wmts;
  const published = [
    ...(wmts.project ? [['', 'the whole project'] as const] : []),
    ...wmts.groups.map((name) => [name, `group ${name}`] as const),
    ...wmts.layers.map((name) => [name, name] as const),
  ];
  const setFormat = (name: string, format: TileFormat, on: boolean): void =>
    edit((d) => {
      const formats = TILE_FORMATS.map(([each]) => each).filter((each) =>
        each === format ? on : formatsOf(d.wmts, name).includes(each),
      );
      return { ...d, wmts: { ...d.wmts, formats: { ...d.wmts.formats, [name]: formats } } };
    });
  return (
    <fieldset class="card">
      <legend>WMTS: published tiles</legend>
      <label class="check">
        <input
          type="checkbox"
          checked={wmts.project}
          onChange={(event) => {
            const on = event.currentTarget.checked;
            edit((d) => {
              const formats = Object.fromEntries(Object.entries(d.wmts.formats).filter(([key]) => on || key !== ''));
              return { ...d, wmts: { ...d.wmts, project: on, formats } };
            });
          }}
        />
        The whole project as one tiled layer
      </label>
      <LayerChoice
        legend="Groups"
        names={props.groups}
        chosen={wmts.groups}
        none="The project has no group."
        onToggle={(name, on) => edit((d) => ({ ...d, wmts: publishedTiles(d.wmts, 'groups', name, on) }))}
      />
      <LayerChoice
        legend="Layers"
        names={props.layers}
        chosen={wmts.layers}
        none="The project has no layer."
        onToggle={(name, on) => edit((d) => ({ ...d, wmts: publishedTiles(d.wmts, 'layers', name, on) }))}
      />
      {published.length > 0 && (
        <table class="tile-formats">
          <caption>Tile formats</caption>
          <thead>
            <tr>
              <th scope="col">Published</th>
              {TILE_FORMATS.map(([format, label]) => (
                <th key={format} scope="col">
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {published.map(([name, label]) => {
              const formats = formatsOf(wmts, name);
              return (
                <tr key={`${name}:${label}`}>
                  <th scope="row">{label}</th>
                  {TILE_FORMATS.map(([format, formatLabel]) => (
                    <td key={format}>
                      <input
                        type="checkbox"
                        aria-label={`${formatLabel} tiles of ${label}`}
                        checked={formats.includes(format)}
                        // A tiled layer keeps one format at least.
                        disabled={formats.length === 1 && formats.includes(format)}
                        onChange={(event) => setFormat(name, format, event.currentTarget.checked)}
                      />
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </fieldset>
  );
}
