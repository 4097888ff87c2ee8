/** How a document breaks lines and indents a level: what Steward adds is laid out the same way. */
export interface Layout {
  newline: string;
  unit: string;
}

/** What this module reads of a node of node.ts (which builds on this module, not the reverse). */
interface LaidOutNode {
  kind: string;
  value?: string;
}

/** QGIS's own: line feeds, two spaces per level. */
export const QGIS_LAYOUT: Layout = { newline: '\n', unit: '  ' };

/** The line break and indentation before an element at `depth`. */
export function lineBreak(layout: Layout, depth: number): string {
  return layout.newline + layout.unit.repeat(depth);
}

/**
 * The layout of the document `element` (at `depth`) is part of, read from the whitespace before
 * its first child element; QGIS's when it has none to read.
 */
export function layoutOf(element: { children: readonly LaidOutNode[] }, depth: number): Layout {
  const children = element.children;
  for (let index = 1; index < children.length; index++) {
    const before = children[index - 1];
    if (children[index]?.kind === 'deferred' || children[index]?.kind === 'element') {
      if (before?.kind !== 'text' || before.value === undefined) continue;
      const match = /(\r?\n)([ \t]*)$/.exec(before.value);
      if (!match) continue;
      const indentation = match[2] as string;
      const levels = depth + 1;
      const unit = indentation.length % levels === 0 ? indentation.slice(0, indentation.length / levels) : '';
      return { newline: match[1] as string, unit: unit.length > 0 ? unit : QGIS_LAYOUT.unit };
    }
  }
  return QGIS_LAYOUT;
}
