/**
 * What the console shows of a refused request: a sentence a person can act on, never the API's raw
 * JSON, a schema path or a proxy's HTML page. The status stays on the error for code to decide on.
 */

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

/** Fastify's `invalid body: body/crs must match pattern "…"` as a sentence; other text as it is. */
export function validationInWords(message: string): string {
  const match = /^invalid (?:body|querystring|params|headers|request): (.*)$/.exec(message);
  if (!match) return message;
  // One rule a field broke, or several (`a, b, c`) when it may take more than one form.
  const rules = (match[1] ?? '').split(/, (?=(?:body|querystring|params|headers)\b)/);
  const chosen = rules.find((rule) => / must match pattern /.test(rule)) ?? rules[0] ?? '';
  const parts = /^(?:body|querystring|params|headers)\/?(\S*) (must .*)$/.exec(chosen);
  if (!parts) return message;
  const path = (parts[1] ?? '').split('/').filter(Boolean);
  const name = path.filter((part) => !/^\d+$/.test(part)).pop() ?? 'the request';
  return `The request was refused: ${ruleInWords(name, parts[2] ?? '')}`;
}

/** The sentence for an answer other than 2xx with body `text`. */
export function failureInWords(status: number, statusText: string, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string' && body.error.trim() !== '') return asSentence(validationInWords(body.error));
  } catch {
    // Not JSON: a proxy's page or QGIS Server's XML, described below rather than shown.
  }
  const plain = text.trim();
  if (plain !== '' && plain.length <= 200 && !/[<{]/.test(plain)) return asSentence(plain);
  if (status === 502 || status === 503 || status === 504)
    return 'Steward could not be reached: the server in front of it answered that it is down or restarting. Try again in a moment.';
  return `Steward refused the request (${status}${statusText ? ` ${statusText}` : ''}) without saying why.`;
}
