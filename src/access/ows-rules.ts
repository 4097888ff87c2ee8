import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

import { type ProjectRef } from '../storage/project-ref.js';
import { type Permissions } from './permissions.js';
import { type LayerRule, OWS_SERVICES, type OwsService, type ProjectRule } from './records.js';
import { type Identity } from './service.js';

/**
 * The FastCGI parameter that carries an identity's rules for one project to QGIS Server, where the
 * plugin's access filter applies them (plugin/steward_monitor/access.py). Only nginx (from
 * Steward's answer to its `auth_request`) and Steward's own map requests set it: a client's
 * header becomes an `HTTP_` parameter, never this one.
 */
export const OWS_ACCESS_PARAMETER = 'STEWARD_ACCESS';

/** What QGIS Server may serve of one layer: nothing, or its features without some attributes and outside a filter. */
export type OwsLayerRules = { read: false } | { hidden?: string[]; filter?: string };

/** An identity's rules for one project, as the plugin reads them. */
export interface OwsRules {
  /** The MAP value they are for: the plugin refuses every layer of any other project. */
  map: string;
  /** The capabilities cache key: the role set, and a digest of what it grants here. */
  key: string;
  /** Whether WFS-T may insert, update and delete. */
  write: boolean;
  /** By layer name; a layer not listed is served whole. */
  layers: Record<string, OwsLayerRules>;
}

/** A QGIS string literal. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** `filter` with the identity's variables written in: `@steward_user` and `@steward_roles`. */
function withIdentity(filter: string, identity: Identity): string {
  return filter
    .replace(/@steward_user\b/g, literal(identity.name))
    .replace(/@steward_roles\b/g, `array(${identity.roles.map(literal).join(', ')})`);
}

/**
 * One layer's rules over the roles that grant the project: readable when one of them leaves it
 * readable; an attribute hidden when every role that reads the layer hides it; the features any
 * of those roles may see (their filters joined by OR, none when one of them has none).
 */
function layerRules(layer: string, rules: readonly ProjectRule[], identity: Identity): OwsLayerRules {
  const readers = rules
    .map(
      (rule): LayerRule =>
        (rule.layers !== undefined && Object.hasOwn(rule.layers, layer) ? rule.layers[layer] : {}) ?? {},
    )
    .filter((rule) => rule.read !== false);
  if (readers.length === 0) return { read: false };
  const [first, ...others] = readers.map((rule) => new Set(rule.hidden_attributes ?? []));
  const hidden = [...(first ?? [])].filter((attribute) => others.every((set) => set.has(attribute)));
  const filters = readers.map((rule) => rule.filter);
  const everyFiltered = filters.every((filter): filter is string => filter !== undefined && filter.trim() !== '');
  const filter = everyFiltered ? filters.map((each) => `(${withIdentity(each, identity)})`).join(' OR ') : undefined;
  return { ...(hidden.length > 0 && { hidden: hidden.sort() }), ...(filter !== undefined && { filter }) };
}

/**
 * What `identity` may be served of the project `ref` (MAP value `map`) by QGIS Server; undefined
 * when everything (an administrator). The caller has checked that it may read the project.
 */
export function owsRules(identity: Identity, ref: ProjectRef, map: string): OwsRules | undefined {
  const permissions = identity.permissions;
  if (permissions.admin) return undefined;
  const rules = permissions.rulesFor(ref);
  const names = new Set(rules.flatMap((rule) => Object.keys(rule.layers ?? {})));
  const layers: Record<string, OwsLayerRules> = {};
  for (const name of [...names].sort()) {
    const layer = layerRules(name, rules, identity);
    if ('read' in layer || Object.keys(layer).length > 0) layers[name] = layer;
  }
  const write = permissions.may(ref, 'write') && permissions.service('WFS') && permissions.service('WFS-T');
  const granted = JSON.stringify({ write, layers });
  const digest = createHash('sha256').update(granted).digest('base64url').slice(0, 16);
  return { map, key: `${[...identity.roles].sort().join(',')}:${digest}`, write, layers };
}

/**
 * What QGIS Server may serve `identity` of one layer of the project `ref`; undefined for an
 * administrator, who is served the whole layer.
 */
export function owsLayerRules(identity: Identity, ref: ProjectRef, layer: string): OwsLayerRules | undefined {
  if (identity.permissions.admin) return undefined;
  return layerRules(layer, identity.permissions.rulesFor(ref), identity);
}

/**
 * The parameter's value for `rules`: base64url of their JSON deflated (zlib); '' for no
 * restriction. Deflated, the rules of ten roles of ten filtered layers took 316 characters where
 * they took 6,739: the plugin reads the value as a Python string on each request, and nginx
 * holds it as a header of its subrequest's answer.
 */
export function encodeOwsRules(rules: OwsRules | undefined): string {
  return rules === undefined ? '' : deflateSync(JSON.stringify(rules)).toString('base64url');
}

/** The values compiled, by role set (their Permissions, made again when one of its roles changes) and request. */
const compiled = new WeakMap<Permissions, Map<string, string>>();
/** Values kept per role set: identities' names times projects; forgotten all at once past it. */
const COMPILED_PER_ROLE_SET = 1000;

/**
 * The parameter's value for `identity` in the project `ref` (MAP value `map`), compiled once per
 * role set, name and project: compiling ten roles of ten filtered layers each took 250 µs of
 * CPU, on every request nginx asked about.
 */
export function owsAccessValue(identity: Identity, ref: ProjectRef, map: string): string {
  let byRequest = compiled.get(identity.permissions);
  if (byRequest === undefined) {
    byRequest = new Map();
    compiled.set(identity.permissions, byRequest);
  }
  const key = JSON.stringify([identity.name, identity.roles, ref.schema, ref.name, map]);
  let value = byRequest.get(key);
  if (value === undefined) {
    if (byRequest.size >= COMPILED_PER_ROLE_SET) byRequest.clear();
    value = encodeOwsRules(owsRules(identity, ref, map));
    byRequest.set(key, value);
  }
  return value;
}

/**
 * Which of a role's services an OWS request is, by its SERVICE and REQUEST (any case) and its path:
 * QGIS Server serves OGC API Features to any path holding `/wfs3`, whatever the query says.
 */
export function owsServicesOf(service: string, request: string, path = ''): OwsService[] {
  const kind = service.toUpperCase();
  const operation = request.toLowerCase();
  const named = (OWS_SERVICES as readonly string[]).includes(kind) ? [kind as OwsService] : [];
  if (kind === 'WFS' && operation === 'transaction') named.push('WFS-T');
  const byOperation = OWS_SERVICES.find((each) => each.toLowerCase() === operation && each.startsWith('Get'));
  if (byOperation !== undefined) named.push(byOperation);
  if (path.includes('/wfs3')) named.push('OAPIF');
  return named;
}
