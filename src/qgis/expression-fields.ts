/**
 * The fields a QGIS expression (or an OGR SQL filter) reads: its column references, `"quoted"` or
 * bare (QGIS reads a bare identifier as a column), leaving out strings, numbers, function names,
 * keywords, variables (`@name`) and `$geometry`-like values.
 */

const KEYWORDS: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'in',
  'is',
  'null',
  'like',
  'ilike',
  'case',
  'when',
  'then',
  'else',
  'end',
  'true',
  'false',
  'between',
  'similar',
  'to',
  'escape',
]);

const TOKENS =
  /'(?:[^'\\]|\\.|'')*'|"((?:[^"\\]|\\.|"")*)"|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|([@$]?[\p{L}_][\p{L}\p{N}_]*)(\s*\()?|\S/gu;

export function expressionFields(expression: string): Set<string> {
  const fields = new Set<string>();
  for (const [, quoted, bare, call] of expression.matchAll(TOKENS)) {
    if (quoted !== undefined) fields.add(quoted.replace(/""/g, '"').replace(/\\(.)/g, '$1'));
    else if (bare !== undefined && call === undefined && !/^[@$]/.test(bare) && !KEYWORDS.has(bare.toLowerCase()))
      fields.add(bare);
  }
  return fields;
}
