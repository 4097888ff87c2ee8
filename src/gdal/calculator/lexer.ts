/**
 * Tokens of the QGIS raster calculator language, read the way QGIS's flex lexer reads them
 * (qgsrastercalclexer.ll): case-insensitive keywords, longest match first, and unquoted band
 * references made of letters, digits, `_ . / : -` and non-ASCII characters followed by `@<band>`.
 * One consequence is kept on purpose so expressions mean what they mean in QGIS: a `-` written
 * directly before a name belongs to the name (`a@1-b@1` is two references, `1-a@1` one).
 */
import { BadRequest } from '../../errors.js';
import { type BandReference, type BinaryOperator, type FunctionName, isFunctionName } from './ast.js';

interface TokenBase {
  /** 1-based position of the token's first character. */
  position: number;
  text: string;
}

export type Token =
  | (TokenBase & { kind: 'number'; value: number })
  | (TokenBase & { kind: 'band'; ref: BandReference })
  | (TokenBase & { kind: 'function'; name: FunctionName })
  | (TokenBase & { kind: 'operator'; operator: BinaryOperator })
  | (TokenBase & { kind: '(' | ')' | ',' | 'end' });

/** QGIS reads `-b@1` as one name; this says so where that is the likely cause of an error. */
export function minusHint(name: string): string {
  return name.startsWith('-')
    ? ' (a "-" written directly before a name is part of the name, as in QGIS: put a space after the "-")'
    : '';
}

/** A syntax error, always naming the 1-based character position. */
export function expressionError(position: number, message: string): BadRequest {
  return new BadRequest(`Invalid expression at character ${position}: ${message}.`);
}

const OPERATORS: ReadonlyArray<BinaryOperator> = ['<=', '>=', '!=', '<', '>', '=', '+', '-', '*', '/', '^'];
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';
const isWordStart = (ch: string | undefined): boolean => ch !== undefined && /^[A-Za-z_]$/.test(ch);
const isWordPart = (ch: string | undefined): boolean => isWordStart(ch) || isDigit(ch);
const isReferencePart = (ch: string | undefined): boolean =>
  ch !== undefined && (/^[A-Za-z0-9_./:-]$/.test(ch) || (ch.codePointAt(0) ?? 0) > 0x7f);

class Scanner {
  /** Code points, so positions count characters as a person does. */
  readonly chars: string[];
  index = 0;

  constructor(text: string) {
    this.chars = [...text];
  }

  at(offset = 0): string | undefined {
    return this.chars[this.index + offset];
  }

  slice(from: number, to: number): string {
    return this.chars.slice(from, to).join('');
  }

  skipWhitespace(): void {
    while (WHITESPACE.has(this.at() ?? '')) this.index++;
  }

  runLength(from: number, accepts: (ch: string | undefined) => boolean): number {
    let end = from;
    while (accepts(this.chars[end])) end++;
    return end - from;
  }
}

/** Length of an unquoted `name@band` starting here, or 0. */
function unquotedReferenceLength(s: Scanner): number {
  const name = s.runLength(s.index, isReferencePart);
  if (name === 0 || s.at(name) !== '@') return 0;
  const digits = s.runLength(s.index + name + 1, isDigit);
  return digits === 0 ? 0 : name + 1 + digits;
}

/** Length of a number as QGIS writes them (`12`, `1.`, `.5`, `2.5e-3`) starting here, or 0. */
function numberLength(s: Scanner): number {
  let end = s.index + s.runLength(s.index, isDigit);
  const integerDigits = end - s.index;
  if (s.chars[end] === '.') {
    const fraction = s.runLength(end + 1, isDigit);
    if (integerDigits === 0 && fraction === 0) return 0;
    end += 1 + fraction;
  } else if (integerDigits === 0) {
    return 0;
  }
  if (s.chars[end] === 'e' || s.chars[end] === 'E') {
    const sign = s.chars[end + 1] === '+' || s.chars[end + 1] === '-' ? 1 : 0;
    const exponent = s.runLength(end + 1 + sign, isDigit);
    if (exponent > 0) end += 1 + sign + exponent;
  }
  return end - s.index;
}

function splitReference(text: string, position: number): BandReference {
  const at = text.lastIndexOf('@');
  const band = at > 0 ? text.slice(at + 1) : '';
  if (!/^[0-9]+$/.test(band)) {
    throw expressionError(position, `"${text}" is not a band reference; write it as "layer@band", for example "dem@1"`);
  }
  const number = Number(band);
  if (number < 1) throw expressionError(position, `band numbers start at 1, "${text}" asks for band ${band}`);
  return { layer: text.slice(0, at), band: number };
}

function quotedReference(s: Scanner, position: number): Token {
  const start = s.index;
  let name = '';
  s.index++;
  for (;;) {
    const ch = s.at();
    if (ch === undefined) throw expressionError(position, 'the quoted band reference is not closed with "');
    s.index++;
    if (ch === '"') break;
    if (ch === '\\' && s.at() !== undefined) {
      name += s.at();
      s.index++;
    } else {
      name += ch;
    }
  }
  return { kind: 'band', ref: splitReference(name, position), position, text: s.slice(start, s.index) };
}

function word(s: Scanner, position: number): Token {
  const length = s.runLength(s.index, isWordPart);
  const text = s.slice(s.index, s.index + length);
  s.index += length;
  const lower = text.toLowerCase();
  if (lower === 'and' || lower === 'or')
    return { kind: 'operator', operator: lower === 'and' ? 'AND' : 'OR', position, text };
  if (isFunctionName(lower)) return { kind: 'function', name: lower, position, text };
  throw expressionError(
    position,
    `unknown name "${text}"; a band is written "layer@band" (quoted when the name has other characters) and the functions are abs, sqrt, sin, cos, tan, asin, acos, atan, ln, log10, min, max and if`,
  );
}

function symbol(s: Scanner, position: number): Token {
  const ch = s.at() ?? '';
  if (ch === '(' || ch === ')' || ch === ',') {
    s.index++;
    return { kind: ch, position, text: ch };
  }
  const operator = OPERATORS.find((op) => s.slice(s.index, s.index + op.length) === op);
  if (operator === undefined) throw expressionError(position, `unexpected character "${ch}"`);
  s.index += operator.length;
  return { kind: 'operator', operator, position, text: operator };
}

function nextToken(s: Scanner): Token {
  s.skipWhitespace();
  const position = s.index + 1;
  const ch = s.at();
  if (ch === undefined) return { kind: 'end', position, text: '' };
  if (ch === '"') return quotedReference(s, position);
  const reference = unquotedReferenceLength(s);
  if (reference > 0) {
    const text = s.slice(s.index, s.index + reference);
    s.index += reference;
    return { kind: 'band', ref: splitReference(text, position), position, text };
  }
  const number = numberLength(s);
  if (number > 0) {
    const text = s.slice(s.index, s.index + number);
    s.index += number;
    return { kind: 'number', value: Number(text), position, text };
  }
  if (isWordStart(ch)) return word(s, position);
  return symbol(s, position);
}

/** The tokens of an expression, ending with an `end` token. */
export function tokenize(expression: string): Token[] {
  const scanner = new Scanner(expression);
  const tokens: Token[] = [];
  for (;;) {
    const token = nextToken(scanner);
    tokens.push(token);
    if (token.kind === 'end') return tokens;
  }
}
