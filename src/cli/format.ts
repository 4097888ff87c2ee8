/** Quantities as the `steward` tables print them. */

const MIB = 1024 * 1024;

/** `45s`, `12m05s`, `3h07m`: the two largest units. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  if (hours > 0) return `${hours}h${String(minutes % 60).padStart(2, '0')}m`;
  return minutes > 0 ? `${minutes}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;
}

const BAR_WIDTH = 30;

/** `[########----------------------]`: `fraction` (0 to 1) of a bar. */
export function progressBar(fraction: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

/** `173 MiB`. */
export function mebibytes(bytes: number): string {
  return `${Math.round(bytes / MIB)} MiB`;
}

/** The machine's load over 1, 5 and 15 minutes: `0.42 0.30 0.25`. */
export function loadAverage(load: { '1m': number; '5m': number; '15m': number }): string {
  return [load['1m'], load['5m'], load['15m']].map((value) => value.toFixed(2)).join(' ');
}
