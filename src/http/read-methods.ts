/** The HTTP methods that change nothing: writes are every other. */
const READS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isReadMethod(method: string): boolean {
  return READS.has(method);
}
