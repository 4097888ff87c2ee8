import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A family no configuration names: what fontconfig gives for it is its fallback for any unknown name. */
const UNKNOWN_FAMILY = 'Steward Unknown Family 0d4b';

/** A family in fontconfig's pattern syntax, where `\`, `-`, `:` and `,` are escaped. */
function patternOf(family: string): string {
  return family.replace(/[\\\-:,]/g, (c) => `\\${c}`);
}

async function fontconfig(program: 'fc-match' | 'fc-pattern', args: string[]): Promise<string> {
  return (await run(program, args, { maxBuffer: 1024 * 1024 })).stdout.trim();
}

/**
 * Whether fontconfig draws the family with a font the configuration chose for it, as Qt asks it
 * when the family is not installed: a name the configuration rewrites (`Sans`, an alias of
 * sans-serif drawn with DejaVu Sans), or one it adds a substitute to (`Arial` drawn with
 * Liberation Sans), rather than its fallback for any unknown name.
 */
async function resolvedByConfiguration(family: string): Promise<boolean> {
  const [substituted, matched, fallback] = await Promise.all([
    fontconfig('fc-pattern', ['-c', '-f', '%{family}', patternOf(family)]),
    fontconfig('fc-match', ['-f', '%{family[0]}', patternOf(family)]),
    fontconfig('fc-match', ['-f', '%{family[0]}', UNKNOWN_FAMILY]),
  ]);
  const families = substituted.split(',').map((name) => name.trim().toLowerCase());
  if (!families.includes(family.toLowerCase())) return true;
  return matched.toLowerCase() !== fallback.toLowerCase();
}

/**
 * The font families fontconfig knows on this machine, lower-cased: what QGIS (through Qt) can
 * draw labels with when it runs here. `fc-list` prints one font a line, its families
 * comma-separated; each of `wanted` it does not list is added when fontconfig's matching gives it
 * a font of the configuration's choice (resolvedByConfiguration).
 */
export async function installedFontFamilies(wanted: readonly string[] = []): Promise<Set<string>> {
  const { stdout } = await run('fc-list', [':', 'family'], { maxBuffer: 16 * 1024 * 1024 });
  const families = new Set<string>();
  for (const line of stdout.split('\n')) {
    for (const family of line.split(',')) if (family.trim()) families.add(family.trim().toLowerCase());
  }
  const unlisted = [...new Set(wanted)].filter((family) => !families.has(family.toLowerCase()));
  const resolved = await Promise.all(unlisted.map(resolvedByConfiguration));
  unlisted.forEach((family, index) => {
    if (resolved[index]) families.add(family.toLowerCase());
  });
  return families;
}
