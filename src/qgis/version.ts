/**
 * QGIS versions as Steward carries them: `major.minor.patch` in ASCII (`3.22.16`), never with the
 * release name QGIS appends (`3.22.16-Białowieża`), which no HTTP header may hold.
 */

/** The oldest QGIS Server the plugin supports (plugin/steward_monitor/metadata.txt). */
const OLDEST_SUPPORTED = [3, 22] as const;

/** `3.22.16`, or the form older plugins report, `3.22.16-Białowieża`. Each number at most 3 digits. */
const REPORTED = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:-.{0,100})?$/su;

/**
 * The version an instance reports, as `3.22.16`, or undefined when it is not the version of a
 * QGIS Server the plugin supports (malformed, or older than 3.22).
 */
export function reportedQgisVersion(text: string | undefined): string | undefined {
  const match = REPORTED.exec(text ?? '');
  if (!match) return undefined;
  const [major, minor, patch] = match.slice(1).map(Number) as [number, number, number];
  const [oldestMajor, oldestMinor] = OLDEST_SUPPORTED;
  if (major < oldestMajor || (major === oldestMajor && minor < oldestMinor)) return undefined;
  return `${major}.${minor}.${patch}`;
}

/** Orders `3.40.6` before `3.44.1`, by the numbers of major.minor.patch (a missing one counts as 0). */
export function compareQgisVersions(a: string, b: string): number {
  const numbers = (text: string) => (/^(\d+)\.(\d+)(?:\.(\d+))?/.exec(text) ?? []).slice(1).map((n) => Number(n ?? 0));
  const [x, y] = [numbers(a), numbers(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
