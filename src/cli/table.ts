/** Plain-text tables in the style of `docker ps`: left-aligned columns separated by three spaces. */

const GAP = '   ';

/** Code points of East Asian Wide and Fullwidth characters (Unicode's EastAsianWidth.txt, W and F). */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x18cff],
  [0x1b000, 0x1b2ff],
  [0x1f200, 0x1f2ff],
  [0x20000, 0x3fffd],
];
const EMOJI = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F/u;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}]+$/u;
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

function isWide(codePoint: number): boolean {
  return WIDE_RANGES.some(([first, last]) => codePoint >= first && codePoint <= last);
}

/** Columns a grapheme takes on a terminal: 2 for wide characters and emoji, 0 for marks alone, else 1. */
function graphemeWidth(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) return 0;
  if (EMOJI.test(grapheme) || isWide(grapheme.codePointAt(0) ?? 0)) return 2;
  return 1;
}

/** Columns `text` takes on a terminal, combining marks attached to the character they follow. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
}

function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(displayWidth(header), ...rows.map((row) => displayWidth(row[column] ?? ''))),
  );
  const line = (cells: readonly string[]) =>
    widths
      .map((width, column) => padEnd(cells[column] ?? '', width))
      .join(GAP)
      .trimEnd();
  return `${[headers, ...rows].map(line).join('\n')}\n`;
}
