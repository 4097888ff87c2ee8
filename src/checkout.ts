import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding Steward's package.json: the checkout, or the installed package. Found by
 * walking up from this module, so that it is the same from `src/` (run through tsx) and `dist/src/`.
 */
export function checkoutDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Steward is not inside a folder with a package.json');
    dir = parent;
  }
  return dir;
}

/** Where `npm run build:web` writes the web console. */
export function consoleBuildDir(): string {
  return join(checkoutDir(), 'web', 'dist');
}

/** The symbology catalogues of each QGIS release, kept as JSON files in the sources (the build does not copy them). */
export function catalogueDir(): string {
  return join(checkoutDir(), 'src', 'qgis', 'symbology');
}
