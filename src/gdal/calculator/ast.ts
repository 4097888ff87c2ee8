/**
 * The tree of a raster calculator expression. Positions are 1-based character offsets into the
 * expression, kept so later checks (unknown layer, missing band) can point at the text.
 */
export type UnaryFunction = 'abs' | 'sqrt' | 'sin' | 'cos' | 'tan' | 'asin' | 'acos' | 'atan' | 'ln' | 'log10';
export type FunctionName = UnaryFunction | 'min' | 'max' | 'if';

export type ComparisonOperator = '<' | '>' | '<=' | '>=' | '=' | '!=';
export type BinaryOperator = '+' | '-' | '*' | '/' | '^' | ComparisonOperator | 'AND' | 'OR';

export interface BandReference {
  layer: string;
  band: number;
}

export type ExpressionNode =
  | { kind: 'number'; value: number }
  | { kind: 'band'; ref: BandReference; position: number }
  | { kind: 'negate'; operand: ExpressionNode }
  | { kind: 'binary'; operator: BinaryOperator; left: ExpressionNode; right: ExpressionNode }
  | { kind: 'call'; name: FunctionName; args: ExpressionNode[] };

/** Number of arguments each function takes. */
export const FUNCTION_ARITY: Readonly<Record<FunctionName, number>> = {
  abs: 1,
  sqrt: 1,
  sin: 1,
  cos: 1,
  tan: 1,
  asin: 1,
  acos: 1,
  atan: 1,
  ln: 1,
  log10: 1,
  min: 2,
  max: 2,
  if: 3,
};

export function isFunctionName(name: string): name is FunctionName {
  return Object.hasOwn(FUNCTION_ARITY, name);
}

/** Every band reference of the tree, in the order they appear in the text. */
export function bandReferences(node: ExpressionNode): Array<{ ref: BandReference; position: number }> {
  switch (node.kind) {
    case 'number':
      return [];
    case 'band':
      return [{ ref: node.ref, position: node.position }];
    case 'negate':
      return bandReferences(node.operand);
    case 'binary':
      return [...bandReferences(node.left), ...bandReferences(node.right)];
    case 'call':
      return node.args.flatMap(bandReferences);
  }
}

/** The nodes directly below `node`. */
function childrenOf(node: ExpressionNode): readonly ExpressionNode[] {
  switch (node.kind) {
    case 'number':
    case 'band':
      return [];
    case 'negate':
      return [node.operand];
    case 'binary':
      return [node.left, node.right];
    case 'call':
      return node.args;
  }
}

/** Whether `accepts` holds for `node` and every node below it. */
export function everyNode(node: ExpressionNode, accepts: (node: ExpressionNode) => boolean): boolean {
  return accepts(node) && childrenOf(node).every((child) => everyNode(child, accepts));
}

export function referenceKey(ref: BandReference): string {
  return `${ref.layer}@${ref.band}`;
}
