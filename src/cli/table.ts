/** Plain-text tables in the style of `docker ps`: left-aligned columns separated by three spaces. */

const GAP = '   ';

export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    widths
      .map((width, column) => (cells[column] ?? '').padEnd(width))
      .join(GAP)
      .trimEnd();
  return `${[headers, ...rows].map(line).join('\n')}\n`;
}
