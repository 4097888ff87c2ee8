/**
 * Compiles an expression tree once into a loop over typed arrays. The loop's source is generated
 * from the tree with `new Function` because V8 then optimises one straight-line body per
 * expression, several times faster than walking the tree per pixel or per operator. Nothing from
 * the user's text reaches the generated source: bands become `v<i>`, numbers are passed in as
 * `K[<i>]`, and operators and functions come from the fixed tables below.
 */
import { comparableNoData, type PixelArray, type PixelStorage } from '../pixels.js';
import { type BinaryOperator, everyNode, type ExpressionNode, type FunctionName, referenceKey } from './ast.js';

export interface KernelInput {
  /** `layer@band`, as ast.referenceKey writes it. */
  key: string;
  /** How the input's pixels are held: floats may carry NaN, which counts as no-data. */
  storage: PixelStorage;
  noData: number | null;
}

/**
 * Evaluates the expression for pixels [0, n) of the inputs into `out`. Pixel i of every input is
 * read before pixel i of `out` is written, so `out` may be an input's own array.
 */
export type Kernel = (n: number, out: Float32Array, inputs: readonly PixelArray[]) => void;

const ARITHMETIC: Partial<Record<BinaryOperator, string>> = { '+': '+', '-': '-', '*': '*', '/': '/' };
const COMPARISON: Partial<Record<BinaryOperator, string>> = {
  '<': '<',
  '>': '>',
  '<=': '<=',
  '>=': '>=',
  '=': '===',
  '!=': '!==',
};
const MATH: Record<Exclude<FunctionName, 'if'>, string> = {
  abs: 'Math.abs',
  sqrt: 'Math.sqrt',
  sin: 'Math.sin',
  cos: 'Math.cos',
  tan: 'Math.tan',
  asin: 'Math.asin',
  acos: 'Math.acos',
  atan: 'Math.atan',
  ln: 'Math.log',
  log10: 'Math.log10',
  min: 'Math.min',
  max: 'Math.max',
};

class Emitter {
  readonly constants: number[] = [];

  constructor(private readonly inputIndex: ReadonlyMap<string, number>) {}

  emit(node: ExpressionNode): string {
    switch (node.kind) {
      case 'number':
        this.constants.push(node.value);
        return `k${this.constants.length - 1}`;
      case 'band':
        return `v${this.inputIndex.get(referenceKey(node.ref)) ?? missing(referenceKey(node.ref))}`;
      case 'negate':
        return `(-${this.emit(node.operand)})`;
      case 'binary':
        return this.binary(node.operator, this.emit(node.left), this.emit(node.right));
      case 'call':
        return this.call(
          node.name,
          node.args.map((arg) => this.emit(arg)),
        );
    }
  }

  private binary(operator: BinaryOperator, left: string, right: string): string {
    const arithmetic = ARITHMETIC[operator];
    if (arithmetic) return `(${left} ${arithmetic} ${right})`;
    const comparison = COMPARISON[operator];
    if (comparison) return `(${left} ${comparison} ${right} ? 1 : 0)`;
    if (operator === '^') return `Math.pow(${left}, ${right})`;
    const logic = operator === 'AND' ? '&&' : '||';
    return `(${left} !== 0 ${logic} ${right} !== 0 ? 1 : 0)`;
  }

  private call(name: FunctionName, args: string[]): string {
    if (name === 'if') return `(${args[0]} !== 0 ? ${args[1]} : ${args[2]})`;
    return `${MATH[name]}(${args.join(', ')})`;
  }
}

function missing(key: string): never {
  throw new Error(`the kernel has no input for ${key}`);
}

/**
 * Whether a NaN anywhere reaches the result. Arithmetic and the functions other than `if` carry
 * NaN through, and a NaN result is written as no-data anyway, so NaN inputs then need no test of
 * their own; comparisons, AND, OR, `if` and `^` (NaN^0 is 1) can turn a NaN into a number.
 */
function carriesNaN(tree: ExpressionNode): boolean {
  return everyNode(
    tree,
    (node) =>
      (node.kind !== 'binary' || ARITHMETIC[node.operator] !== undefined) &&
      (node.kind !== 'call' || node.name !== 'if'),
  );
}

function inputChecks(inputs: readonly KernelInput[], testNaN: boolean): string[] {
  return inputs.map((input, i) => {
    const tests: string[] = [];
    if (testNaN && input.storage !== 'integer') tests.push(`v${i} !== v${i}`);
    if (!Number.isNaN(comparableNoData(input.noData, input.storage))) tests.push(`v${i} === m${i}`);
    const load = `const v${i} = a${i}[i];`;
    return tests.length === 0 ? load : `${load} if (${tests.join(' || ')}) { out[i] = ND; continue; }`;
  });
}

/**
 * Doubles whose magnitude is below this round to a finite Float32: halfway between FLT_MAX and
 * 2^128, a tie that rounds to the even 2^128, that is to Infinity. NaN fails both comparisons.
 */
const FLOAT32_ROUNDING_LIMIT = 2 ** 128 - 2 ** 103;

function kernelSource(inputs: readonly KernelInput[], expression: string, constants: number, testNaN: boolean): string {
  const lines = [
    '"use strict";',
    'return function kernel(n, out, inputs) {',
    ...inputs.map((_, i) => `const a${i} = inputs[${i}]; const m${i} = M[${i}];`),
    ...Array.from({ length: constants }, (_, i) => `const k${i} = K[${i}];`),
    'for (let i = 0; i < n; i++) {',
    ...inputChecks(inputs, testNaN),
    `const r = ${expression};`,
    // Storing into the Float32Array rounds r as Math.fround would; testing the double against the
    // rounding limit instead of the rounded value is faster (docs/jobs.md).
    'if (r > -FLT_LIMIT && r < FLT_LIMIT) out[i] = r; else out[i] = ND;',
    '}',
    '};',
  ];
  return lines.join('\n');
}

/**
 * Compiles `tree` for the given inputs. Output pixels are `outputNoData` where an input is
 * no-data (its no-data value, or NaN in a float input) or the result is not a finite Float32.
 */
export function compileExpression(tree: ExpressionNode, inputs: readonly KernelInput[], outputNoData: number): Kernel {
  const emitter = new Emitter(new Map(inputs.map((input, i) => [input.key, i])));
  const expression = emitter.emit(tree);
  const noData = inputs.map((input) => comparableNoData(input.noData, input.storage));
  // The expression is compiled to a function once, then run over every block of pixels.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const build = new Function(
    'K',
    'M',
    'ND',
    'FLT_LIMIT',
    kernelSource(inputs, expression, emitter.constants.length, !carriesNaN(tree)),
  ) as (constants: number[], noData: number[], outputNoData: number, limit: number) => Kernel;
  return build(emitter.constants, noData, outputNoData, FLOAT32_ROUNDING_LIMIT);
}
