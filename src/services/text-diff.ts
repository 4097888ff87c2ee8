/** The unified difference of two texts by lines, as `diff -u` prints it. */

type Edit = { kind: ' ' | '-' | '+'; line: string };

/** Lines of context around each change. */
const CONTEXT = 3;
/** Edits the shortest script is searched for up to; beyond, the changed middle is told as removed then added. */
const MAX_EDITS = 1000;

/**
 * The shortest edit script from `a` to `b` (Myers' greedy algorithm, by furthest-reaching paths);
 * undefined when it takes more than MAX_EDITS edits.
 */
function shortestEdits(a: readonly string[], b: readonly string[]): Edit[] | undefined {
  const max = Math.min(a.length + b.length, MAX_EDITS);
  const offset = max + 1;
  const reach = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(reach.slice());
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (reach[offset + k - 1] as number) < (reach[offset + k + 1] as number));
      let x = down ? (reach[offset + k + 1] as number) : (reach[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) {
        x++;
        y++;
      }
      reach[offset + k] = x;
      if (x >= a.length && y >= b.length) return backtrack(a, b, trace, offset, d);
    }
  }
  return undefined;
}

function backtrack(
  a: readonly string[],
  b: readonly string[],
  trace: Int32Array[],
  offset: number,
  last: number,
): Edit[] {
  const edits: Edit[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = last; d > 0; d--) {
    const reach = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (reach[offset + k - 1] as number) < (reach[offset + k + 1] as number));
    const previousK = down ? k + 1 : k - 1;
    const previousX = reach[offset + previousK] as number;
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      edits.push({ kind: ' ', line: a[--x] as string });
      y--;
    }
    if (down) edits.push({ kind: '+', line: b[--y] as string });
    else edits.push({ kind: '-', line: a[--x] as string });
  }
  while (x > 0) edits.push({ kind: ' ', line: a[--x] as string });
  return edits.reverse();
}

function lines(text: string): string[] {
  const split = text.split('\n');
  if (split.at(-1) === '') split.pop();
  return split;
}

function range(start: number, count: number): string {
  return `${count === 0 ? start : start + 1},${count}`;
}

/** Groups edits into hunks with CONTEXT lines around changes; `first` is the line number of edits[0] in each text. */
function hunks(edits: readonly Edit[], first: { a: number; b: number }): string[] {
  const out: string[] = [];
  let index = 0;
  let a = first.a;
  let b = first.b;
  while (index < edits.length) {
    const change = edits.findIndex((edit, at) => at >= index && edit.kind !== ' ');
    if (change < 0) break;
    const start = Math.max(index, change - CONTEXT);
    for (let at = index; at < start; at++) {
      a++;
      b++;
    }
    let end = change;
    let quiet = 0;
    for (let at = change; at < edits.length && quiet <= 2 * CONTEXT; at++) {
      quiet = (edits[at] as Edit).kind === ' ' ? quiet + 1 : 0;
      end = at + 1;
    }
    end = Math.min(edits.length, end - Math.max(0, quiet - CONTEXT));
    const body = edits.slice(start, end);
    const removed = body.filter((edit) => edit.kind !== '+').length;
    const added = body.filter((edit) => edit.kind !== '-').length;
    out.push(`@@ -${range(a, removed)} +${range(b, added)} @@`, ...body.map((edit) => edit.kind + edit.line));
    a += removed;
    b += added;
    index = end;
  }
  return out;
}

/** The unified difference from `before` to `after`, headed by their labels; empty when they are equal. */
export function unifiedDiff(before: string, after: string, labels: { from: string; to: string }): string {
  if (before === after) return '';
  const a = lines(before);
  const b = lines(after);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  const head = Math.max(0, prefix - CONTEXT);
  const middleA = a.slice(prefix, a.length - suffix);
  const middleB = b.slice(prefix, b.length - suffix);
  const middle = shortestEdits(middleA, middleB) ?? [
    ...middleA.map((line): Edit => ({ kind: '-', line })),
    ...middleB.map((line): Edit => ({ kind: '+', line })),
  ];
  const edits: Edit[] = [
    ...a.slice(head, prefix).map((line): Edit => ({ kind: ' ', line })),
    ...middle,
    ...a.slice(a.length - suffix, a.length - suffix + CONTEXT).map((line): Edit => ({ kind: ' ', line })),
  ];
  return [`--- ${labels.from}`, `+++ ${labels.to}`, ...hunks(edits, { a: head, b: head }), ''].join('\n');
}
