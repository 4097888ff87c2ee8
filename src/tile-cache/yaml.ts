/**
 * A YAML writer for the subset MapProxy configurations use: mappings, sequences, strings, numbers,
 * booleans. Strings are always double-quoted with JSON escapes, which YAML reads the same way, so
 * no value can be mistaken for a number, a boolean or YAML syntax.
 */
type Scalar = string | number | boolean | null;
export type YamlValue = Scalar | readonly YamlValue[] | YamlMapping;
export interface YamlMapping {
  readonly [key: string]: YamlValue;
}

const INDENT = '  ';
// Characters YAML does not accept raw in a document (JSON.stringify already escapes C0 controls).
const UNPRINTABLE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;

function isMapping(value: YamlValue): value is YamlMapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSequence(value: YamlValue): value is readonly YamlValue[] {
  return Array.isArray(value);
}

function isScalar(value: YamlValue): value is Scalar {
  return value === null || typeof value !== 'object';
}

function key(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : scalar(name);
}

/** YAML 1.1, which PyYAML reads, takes `1e-7` for a string: an exponent needs a fraction before it. */
function number(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`${value} cannot be written to YAML`);
  const text = String(value);
  const exponent = /^(-?\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  return exponent ? `${exponent[1]}.${exponent[2] ?? '0'}e${exponent[3]}` : text;
}

function scalar(value: Scalar): string {
  if (typeof value === 'number') return number(value);
  const text = value === null ? 'null' : JSON.stringify(value);
  return text.replace(UNPRINTABLE, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The value on one line, when it fits there: scalars, empty collections, sequences of scalars. */
function inline(value: YamlValue): string | undefined {
  if (isScalar(value)) return scalar(value);
  if (isSequence(value)) return value.every(isScalar) ? `[${value.map(scalar).join(', ')}]` : undefined;
  return Object.keys(value).length === 0 ? '{}' : undefined;
}

function mappingLines(mapping: YamlMapping, depth: number): string[] {
  const prefix = INDENT.repeat(depth);
  return Object.entries(mapping).flatMap(([name, value]) => {
    const text = inline(value);
    if (text !== undefined) return [`${prefix}${key(name)}: ${text}`];
    return [`${prefix}${key(name)}:`, ...blockLines(value, depth + 1)];
  });
}

function sequenceLines(items: readonly YamlValue[], depth: number): string[] {
  const prefix = INDENT.repeat(depth);
  return items.flatMap((item) => {
    const text = inline(item);
    if (text !== undefined) return [`${prefix}- ${text}`];
    // The item's first line goes after the dash; the rest is already indented one level deeper.
    const [first = '', ...rest] = blockLines(item, depth + 1);
    return [`${prefix}- ${first.slice(prefix.length + INDENT.length)}`, ...rest];
  });
}

function blockLines(value: YamlValue, depth: number): string[] {
  if (isSequence(value)) return sequenceLines(value, depth);
  if (isMapping(value)) return mappingLines(value, depth);
  return [INDENT.repeat(depth) + scalar(value)];
}

/** The mapping as a YAML document, optionally preceded by comment lines. */
export function toYaml(document: YamlMapping, comments: readonly string[] = []): string {
  const header = comments.map((line) => `# ${line.replace(/[\r\n\u0085\u2028\u2029]/g, ' ')}`);
  return [...header, ...mappingLines(document, 0)].join('\n') + '\n';
}
