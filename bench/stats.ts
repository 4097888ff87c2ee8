/** Median, 95th and 99th percentiles of repeated timings, in milliseconds. */
export interface Timing {
  median: number;
  p95: number;
  p99: number;
}

export function summarise(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (quantile: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95), p99: at(0.99) };
}

/** The time of each of `runs` runs of `work`, one after the other. */
export async function sample(runs: number, work: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    await work();
    samples.push(performance.now() - start);
  }
  return samples;
}

export async function time(runs: number, work: () => Promise<unknown>): Promise<Timing> {
  return summarise(await sample(runs, work));
}

export function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** A markdown table. */
export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** "lowest to highest" of one figure over the rounds. */
export function spread(values: number[], digits: number, unit = ''): string {
  return `${Math.min(...values).toFixed(digits)}${unit} to ${Math.max(...values).toFixed(digits)}${unit}`;
}

/** "first to third quartile" of one figure over many rounds: where the middle half of them lie. */
export function quartiles(values: number[], digits: number, unit = ''): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (quantile: number): string =>
    `${(sorted[Math.round(quantile * (sorted.length - 1))] ?? Number.NaN).toFixed(digits)}${unit}`;
  return `${at(0.25)} to ${at(0.75)}`;
}

/** Round by round, `of` divided by `against` (the figures of two servers measured in the same rounds). */
export function ratios(of: number[] = [], against: number[] = []): number[] {
  return of.map((value, round) => value / (against[round] ?? Number.NaN));
}
