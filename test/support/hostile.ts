/**
 * fast-check arbitraries of hostile HTTP input: path segments, query strings, JSON bodies and
 * content types that have broken path handling, XML writers, parsers and validators elsewhere.
 */
import fc from 'fast-check';

const LONG = ['x'.repeat(200), 'x'.repeat(255), 'x'.repeat(256), 'é'.repeat(128), '%'.repeat(100), 'x'.repeat(4097)];

/** Datasources and outputs that lead outside the data folders, to devices, or to GDAL's network and archive readers. */
const HOSTILE_PATHS = [
  '/etc/passwd',
  '/proc/self/environ',
  '/dev/zero',
  '/vsicurl/http://127.0.0.1:1/x.tif',
  '/vsizip//etc/passwd',
  '/vsimem/x.tif',
  '/vsis3/bucket/key.tif',
  '/vsis3/',
  'file:///etc/passwd',
  'http://127.0.0.1:1/',
  'relative.tif',
  '../../../../etc/passwd',
  'service=nope table="public"."t" (geom)',
  'dbname=nope table="a"."b" (geom)',
];

/** Text that means something to a file system, an XML writer, a shell, SQL, GDAL or a URL parser. */
const HOSTILE_STRINGS = [
  '',
  ' ',
  '.',
  '..',
  '...',
  '../',
  '../..',
  '../../../../etc/passwd',
  '..\\..\\x',
  '\\',
  '/',
  '//',
  '.hidden',
  '~',
  '\u0000',
  'a\u0000b',
  '\u0001',
  '\t',
  '\n',
  '\r\n',
  '\u007f',
  '\u0085',
  '\u2028',
  '\u202e',
  '\ufeff',
  '\ud800',
  '\udfff',
  '\ufffe',
  '\uffff',
  'é',
  '名前',
  '🗺',
  'ﬁ',
  '<',
  '>',
  '&',
  '"',
  "'",
  '<>&"\'',
  ']]>',
  '<![CDATA[x]]>',
  '<!--',
  '-->',
  '<?xml version="1.0"?>',
  '&amp;',
  '&#0;',
  '&#x1;',
  '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>&e;',
  '</qgis>',
  '<maplayer>',
  '%',
  '%00',
  '%2e%2e',
  '%2F',
  '$(id)',
  '`id`',
  '; rm -rf /',
  "' OR '1'='1",
  '"; DROP TABLE qgis_projects; --',
  '{}',
  '[]',
  'null',
  'true',
  '0',
  '-1',
  'NaN',
  'Infinity',
  '1e309',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'default',
  'public',
  'CON',
  'NUL',
  '|layername=points',
  '|layerid=0',
  'MAP=/etc/passwd',
  '&MAP=x',
  '?',
  '#',
  ...HOSTILE_PATHS,
  ...LONG,
];

/** Segments sent as written: encodings that decode to separators, `..`, NUL or broken UTF-8. */
const RAW_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2F',
  '..%2F..%2F..%2Fetc%2Fpasswd',
  '..%5C..%5C',
  '%5C',
  '..\\..\\',
  '%00',
  'a%00b',
  '%',
  '%zz',
  '%C0%AE%C0%AE',
  '%252e%252e',
  '%E2%80%AE',
  '%ED%A0%80',
  '%FF',
  '~',
  ';x=1',
  '*',
  "'",
  '',
  'x'.repeat(1001),
];

const RAW_QUERIES = [
  '?schema=public&schema=public',
  '?schema=a&schema=b',
  '?schema',
  '?schema=',
  '?=',
  '?&&&',
  '?%zz=1',
  '?schema=%00',
  '?schema[]=x',
  '?schema[__proto__]=x',
  '?__proto__[polluted]=1',
  '?constructor[prototype][polluted]=1',
  '?__proto__=x',
  '?schema=..%2F..',
  `?${'a'.repeat(5000)}=1`,
  '?schema=public#fragment',
];

const RAW_JSON_BODIES = [
  '',
  ' ',
  '{',
  '{"a":',
  '[1,]',
  "{'a':1}",
  'nul',
  '\u0000',
  '"\\ud800"',
  '1e400',
  '-',
  '{"a":1}{"b":2}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"name":"a","name":"b"}',
  `${'['.repeat(10000)}${']'.repeat(10000)}`,
  `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
  `"${'x'.repeat(1100 * 1024)}"`,
];

const WRONG_CONTENT_TYPES = [
  undefined,
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/jsonp',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  '*/*',
  ';',
  'application/json, text/plain',
];

/** Percent-encodes every byte of the UTF-8 text that is not unreserved in a URL (lone surrogates as U+FFFD). */
export function percentEncode(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const character = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9\-._~]/.test(character) ? character : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** Hostile strings, their pairs, and random text; `tokens` adds strings of the test's own (paths of its folders). */
function hostileText(tokens: readonly string[] = []): fc.Arbitrary<string> {
  const known = fc.constantFrom(...HOSTILE_STRINGS, ...tokens);
  return fc.oneof(
    { weight: 4, arbitrary: known },
    { weight: 2, arbitrary: fc.tuple(known, known).map(([first, second]) => first + second) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
  );
}

/** A hostile datasource or output path; `tokens` adds paths of the test's own (escapes from its folders). */
export function hostilePath(tokens: readonly string[] = []): fc.Arbitrary<string> {
  return fc.constantFrom(...HOSTILE_PATHS, ...tokens);
}

/** A path segment as sent: mostly one of `real` (so requests get past the router), else hostile. */
export function pathSegment(real: readonly string[], tokens: readonly string[]): fc.Arbitrary<string> {
  const known = real.length > 0 ? real : ['x'];
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known).map(percentEncode) },
    { weight: 3, arbitrary: hostileText(tokens).map(percentEncode) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  );
}

/** A query string (with its `?`, or empty): real schemas, hostile keys and values, repeated keys. */
export function queryString(schemas: readonly string[], tokens: readonly string[]): fc.Arbitrary<string> {
  const text = hostileText(tokens);
  const pair = fc
    .tuple(fc.oneof(fc.constant('schema'), text), text)
    .map(([key, value]) => `${percentEncode(key)}=${percentEncode(value)}`);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    { weight: 3, arbitrary: fc.constantFrom(...schemas).map((schema) => `?schema=${percentEncode(schema)}`) },
    { weight: 2, arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERIES) },
  );
}

/** Objects whose own keys would pollute prototypes if merged naively. */
const POLLUTING = [
  JSON.parse('{"__proto__":{"polluted":true}}') as unknown,
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}') as unknown,
];

/** A JSON value of any type, hostile strings, extreme numbers and prototype-polluting objects. */
function hostileJson(tokens: readonly string[] = []): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    hostileText(tokens),
    fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 5e-324, 0.5, -1, 0, 2 ** 31, 2 ** 64),
    fc.constantFrom(null, true, false, [], {}, [null], { '': '' }, ...POLLUTING),
  );
}

function clone<T>(value: T): T {
  // JSON.parse keeps "__proto__" as an own member, as a request body carries it.
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Every member path of a JSON value: ["a"], ["a", "b"], ... */
function memberPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.keys(value).flatMap((key) => [
    [...prefix, key],
    ...memberPaths((value as Record<string, unknown>)[key], [...prefix, key]),
  ]);
}

/** The parent object of `path` in `root`, and the last key. */
function parentOf(root: unknown, path: string[]): { parent: Record<string, unknown>; key: string } {
  let parent = root as Record<string, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
  return { parent, key: path[path.length - 1] ?? '' };
}

function replaced(value: unknown, path: string[], replacement: unknown): unknown {
  const copy = clone(value);
  const { parent, key } = parentOf(copy, path);
  // defineProperty, since assigning "__proto__" would change the prototype instead of adding a member.
  Object.defineProperty(parent, key, { value: replacement, enumerable: true, writable: true, configurable: true });
  return copy;
}

function removed(value: unknown, path: string[]): unknown {
  const copy = clone(value);
  const { parent, key } = parentOf(copy, path);
  delete parent[key];
  return copy;
}

/** A valid body with one change: a member replaced by hostile JSON or text, removed, or one added. */
function mutated(valid: fc.Arbitrary<unknown>, tokens: readonly string[]): fc.Arbitrary<unknown> {
  return valid.chain((body) => {
    if (typeof body !== 'object' || body === null) return hostileJson(tokens);
    const paths = memberPaths(body);
    const added = fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra', ''), hostileJson(tokens));
    const additions = added.map(([key, value]) => replaced(body, [key], value));
    if (paths.length === 0) return additions;
    const path = fc.constantFrom(...paths);
    return fc.oneof(
      fc.tuple(path, hostileJson(tokens)).map(([where, value]) => replaced(body, where, value)),
      fc.tuple(path, hostileText(tokens)).map(([where, value]) => replaced(body, where, value)),
      path.map((where) => removed(body, where)),
      additions,
    );
  });
}

export interface BodySpec {
  contentType?: string;
  /** Text, or bytes for a binary body (a zip). */
  body?: string | Buffer;
}

const asJson = (value: unknown): BodySpec => ({ contentType: 'application/json', body: JSON.stringify(value) });

/**
 * A request body: `valid` as it is and mutated (when the route has a known valid body), hostile
 * JSON, malformed JSON, JSON under a wrong content type, or none at all.
 */
export function requestBody(
  valid: fc.Arbitrary<unknown> | undefined,
  tokens: readonly string[],
): fc.Arbitrary<BodySpec> {
  const json = valid ?? hostileJson(tokens);
  const choices: Array<fc.WeightedArbitrary<BodySpec>> = [
    { weight: 2, arbitrary: hostileJson(tokens).map(asJson) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...RAW_JSON_BODIES).map((body) => ({ contentType: 'application/json', body })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...WRONG_CONTENT_TYPES), json)
        .map(([contentType, value]) => ({ contentType, body: JSON.stringify(value) })),
    },
    { weight: 1, arbitrary: fc.constant({}) },
  ];
  if (valid)
    choices.push(
      { weight: 3, arbitrary: valid.map(asJson) },
      { weight: 5, arbitrary: mutated(valid, tokens).map(asJson) },
    );
  return fc.oneof(...choices);
}

/**
 * `path` (`/api/...` or another route's path, written plainly) spelt as the router or a console
 * catch-all might read it as something else: letters of its segments percent-encoded, the first
 * segment encoded twice, empty and dot segments before it, in upper case. None may reach a route
 * without the token.
 */
export function disguisedPaths(path: string): string[] {
  const [first = '', ...rest] = path.slice(1).split('/');
  const tail = rest.length === 0 ? '' : `/${rest.join('/')}`;
  const encodeAll = (segment: string): string =>
    [...segment].map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const encodeFirst = (segment: string): string => encodeAll(segment.slice(0, 1)) + segment.slice(1);
  const letters = (segment: string): boolean => /^[a-z]/.test(segment);
  const forms = [
    `/${encodeFirst(first)}${tail}`,
    `/${encodeAll(first)}${tail}`,
    `/${encodeAll(first).toUpperCase()}${tail}`,
    `/${encodeFirst(first).replace('%', '%25')}${tail}`,
    `//${first}${tail}`,
    `/./${first}${tail}`,
    `/x/../${first}${tail}`,
    `/${first.toUpperCase()}${tail}`,
    `/${first}${tail.toUpperCase()}`,
    `/${first};x${tail}`,
    `/${[first, ...rest].map((segment) => (letters(segment) ? encodeFirst(segment) : segment)).join('/')}`,
  ];
  return [...new Set(forms)].filter((form) => form !== path);
}
