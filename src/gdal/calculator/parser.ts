/**
 * Recursive-descent parser of the QGIS raster calculator language. Precedence and associativity
 * follow QGIS's bison grammar (qgsrastercalcparser.yy), lowest first: AND, OR, !=, >=, <=,
 * (= < >), (+ -), (* /), ^, then unary minus and plus. Every binary operator is left-associative,
 * so `2^3^2` is `(2^3)^2`, and unary minus binds tighter than `^`, so `-2^2` is 4, as in QGIS.
 */
import { type BinaryOperator, type ExpressionNode, FUNCTION_ARITY, type FunctionName } from './ast.js';
import { expressionError, minusHint, type Token, tokenize } from './lexer.js';

const LEVELS: ReadonlyArray<ReadonlyArray<BinaryOperator>> = [
  ['AND'],
  ['OR'],
  ['!='],
  ['>='],
  ['<='],
  ['=', '<', '>'],
  ['+', '-'],
  ['*', '/'],
  ['^'],
];

const OPERAND = 'a number, a band such as "dem@1", a function or "("';

/**
 * The deepest nesting of parentheses, function calls and signs taken. Each level costs the parser
 * and the compilers stack frames; a person writes a handful.
 */
export const MAX_NESTING = 100;

function describe(token: Token): string {
  return token.kind === 'end' ? 'the end of the expression' : `"${token.text}"`;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private get current(): Token {
    return this.tokens[this.index] as Token;
  }

  private advance(): Token {
    const token = this.current;
    if (token.kind !== 'end') this.index++;
    return token;
  }

  private expect(kind: Token['kind'], what: string): Token {
    const token = this.current;
    if (token.kind !== kind) throw expressionError(token.position, `expected ${what}, found ${describe(token)}`);
    return this.advance();
  }

  parseExpression(): ExpressionNode {
    const tree = this.parseLevel(0);
    const rest = this.current;
    if (rest.kind === ')') throw expressionError(rest.position, 'this ")" closes no "("');
    if (rest.kind !== 'end')
      throw expressionError(
        rest.position,
        `expected an operator, found ${describe(rest)}${rest.kind === 'band' ? minusHint(rest.text) : ''}`,
      );
    return tree;
  }

  private parseLevel(level: number): ExpressionNode {
    const operators = LEVELS[level];
    if (operators === undefined) return this.parseUnary();
    let left = this.parseLevel(level + 1);
    for (;;) {
      const token = this.current;
      if (token.kind !== 'operator' || !operators.includes(token.operator)) return left;
      this.advance();
      left = { kind: 'binary', operator: token.operator, left, right: this.parseLevel(level + 1) };
    }
  }

  /** Parses what `parse` reads one level deeper; BadRequest past MAX_NESTING. */
  private nested(position: number, parse: () => ExpressionNode): ExpressionNode {
    if (++this.depth > MAX_NESTING)
      throw expressionError(
        position,
        `the expression nests parentheses, functions and signs deeper than ${MAX_NESTING} levels`,
      );
    const node = parse();
    this.depth--;
    return node;
  }

  private parseUnary(): ExpressionNode {
    const token = this.current;
    if (token.kind === 'operator' && (token.operator === '-' || token.operator === '+')) {
      this.advance();
      const operand = this.nested(token.position, () => this.parseUnary());
      return token.operator === '-' ? { kind: 'negate', operand } : operand;
    }
    return this.parsePrimary();
  }

  private parsePrimary(): ExpressionNode {
    const token = this.advance();
    switch (token.kind) {
      case 'number':
        return { kind: 'number', value: token.value };
      case 'band':
        return { kind: 'band', ref: token.ref, position: token.position };
      case 'function':
        return this.parseCall(token.name);
      case '(': {
        const inner = this.nested(token.position, () => this.parseLevel(0));
        this.expect(')', '")"');
        return inner;
      }
      default:
        throw expressionError(token.position, `expected ${OPERAND}, found ${describe(token)}`);
    }
  }

  private parseCall(name: FunctionName): ExpressionNode {
    const open = this.expect('(', `"(" after ${name}`);
    const arity = FUNCTION_ARITY[name];
    const args: ExpressionNode[] = [];
    for (let i = 0; i < arity; i++) {
      if (i > 0) this.expect(',', `"," and argument ${i + 1} of ${name} (it takes ${arity})`);
      args.push(this.nested(open.position, () => this.parseLevel(0)));
    }
    const close = this.current;
    if (close.kind === ',') {
      throw expressionError(close.position, `${name} takes ${arity} argument${arity === 1 ? '' : 's'} (found more)`);
    }
    this.expect(')', `")" to close the "(" of ${name} at character ${open.position}`);
    return { kind: 'call', name, args };
  }
}

/** Parses an expression; a syntax error is a BadRequest naming the character position. */
export function parseExpression(expression: string): ExpressionNode {
  return new Parser(tokenize(expression)).parseExpression();
}
