/** Median and 95th percentile of repeated timings, in milliseconds. */
export interface Timing {
  median: number;
  p95: number;
}

export function summarise(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (quantile: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95) };
}

export async function time(runs: number, work: () => Promise<unknown>): Promise<Timing> {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    await work();
    samples.push(performance.now() - start);
  }
  return summarise(samples);
}

export function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** A markdown table. */
export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
