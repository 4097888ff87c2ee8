/**
 * What the console shows of a refused request: a sentence a person can act on, never the API's raw
 * JSON, a schema path or a proxy's HTML page. The status and the API's code (docs/errors.md) stay
 * on the error for the pages to decide on; the words are chosen by the code, not by the sentence.
 */
import type { paths } from './schema';

/** The codes of the API's error answers, as its OpenAPI description lists them. */
export type ErrorCode = NonNullable<
  paths['/api/projects']['get']['responses']['4XX']['content']['application/json']['code']
>;

/** The codes of a request Fastify's schema refused, whose sentence names a field in schema terms. */
const SCHEMA_REFUSALS: ReadonlySet<ErrorCode> = new Set([
  'invalid_body',
  'invalid_query',
  'invalid_params',
  'invalid_headers',
]);

/** Words for the codes whose API sentence is written for scripts and logs rather than for a person here. */
const WORDS: Partial<Record<ErrorCode, string>> = {
  token_invalid: 'The API refused this token: it is wrong, expired or revoked. Check it and try again.',
  token_missing: 'This needs a token: give one to go on.',
  route_not_found:
    'Steward does not offer what this page asked for: reload the page, as Steward may have been updated.',
  invalid_json: 'Steward could not read what this page sent: reload the page and try again.',
  internal: 'Steward failed unexpectedly; its log has the details. Try again, or tell its operator.',
};

const TYPES: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'yes or no',
  array: 'a list',
  object: 'a set of fields',
};

const COMPARISONS: Record<string, string> = { '<=': 'at most', '>=': 'at least', '<': 'below', '>': 'above' };

/** A sentence: its first letter capitalised, ending with a full stop. */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return trimmed;
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?…)]$/.test(first) ? first : `${first}.`;
}

/** What a schema rule says of field `name`, in words. */
function ruleInWords(name: string, rule: string): string {
  const required = /^must have required property '([^']+)'/.exec(rule);
  if (required) return `“${required[1]}” is required`;
  const type = /^must be (\w+)$/.exec(rule);
  if (type?.[1] && TYPES[type[1]]) return `“${name}” must be ${TYPES[type[1]]}`;
  const bound = /^must be (<=|>=|<|>) (\S+)$/.exec(rule);
  if (bound?.[1]) return `“${name}” must be ${COMPARISONS[bound[1]]} ${bound[2]}`;
  const longest = /^must NOT have more than (\d+) (characters|items)$/.exec(rule);
  if (longest) return `“${name}” may have at most ${longest[1]} ${longest[2]}`;
  const shortest = /^must NOT have fewer than (\d+) (characters|items)$/.exec(rule);
  if (shortest)
    return shortest[1] === '1'
      ? `“${name}” may not be empty`
      : `“${name}” needs at least ${shortest[1]} ${shortest[2]}`;
  if (rule.startsWith('must match pattern')) return `“${name}” is not written as the API expects`;
  const format = /^must match format "([^"]+)"$/.exec(rule);
  if (format) return `“${name}” must be a valid ${format[1] === 'date-time' ? 'date and time' : format[1]}`;
  if (rule === 'must NOT have additional properties') return `“${name}” has a field the API does not know`;
  if (rule === 'must be equal to one of the allowed values') return `“${name}” must be one of the values offered`;
  return `“${name}” ${rule}`;
}

/** Fastify's `invalid body: body/crs must match pattern "…"` as a sentence naming the field. */
function validationInWords(message: string): string {
  // One rule a field broke, or several (`a, b, c`) when it may take more than one form.
  const rules = message.replace(/^invalid \w+: /, '').split(/, (?=(?:body|querystring|params|headers)\b)/);
  const chosen = rules.find((rule) => / must match pattern /.test(rule)) ?? rules[0] ?? '';
  const parts = /^(?:body|querystring|params|headers)\/?(\S*) (must .*)$/.exec(chosen);
  if (!parts) return 'The request was refused: a field is not as the API expects';
  const path = (parts[1] ?? '').split('/').filter(Boolean);
  const name = path.filter((part) => !/^\d+$/.test(part)).pop() ?? 'the request';
  return `The request was refused: ${ruleInWords(name, parts[2] ?? '')}`;
}

/** A refused request as the console tells it: the API's code, if it gave one, and the sentence to show. */
export interface Refusal {
  code: ErrorCode | undefined;
  words: string;
}

/** The API's `{"error": …, "code": …}`, if `text` is one. */
function errorAnswer(text: string): { error: string; code: ErrorCode | undefined } | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown };
    if (typeof body.error !== 'string' || body.error.trim() === '') return undefined;
    return { error: body.error, code: typeof body.code === 'string' ? (body.code as ErrorCode) : undefined };
  } catch {
    // Not JSON: a proxy's page or QGIS Server's XML, described by the status rather than shown.
    return undefined;
  }
}

/** The words for an answer other than 2xx with body `text`. */
export function refusalInWords(status: number, statusText: string, text: string): Refusal {
  const answer = errorAnswer(text);
  if (answer) {
    const { code, error } = answer;
    const words = code === undefined ? undefined : SCHEMA_REFUSALS.has(code) ? validationInWords(error) : WORDS[code];
    return { code, words: asSentence(words ?? error) };
  }
  const plain = text.trim();
  if (plain !== '' && plain.length <= 200 && !/[<{]/.test(plain)) return { code: undefined, words: asSentence(plain) };
  if (status === 502 || status === 503 || status === 504)
    return {
      code: undefined,
      words:
        'Steward could not be reached: the server in front of it answered that it is down or restarting. Try again in a moment.',
    };
  return {
    code: undefined,
    words: `Steward refused the request (${status}${statusText ? ` ${statusText}` : ''}) without saying why.`,
  };
}
