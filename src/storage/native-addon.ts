/**
 * The addons of native/ that scripts/build-native.sh builds into native/build. Each is optional:
 * where one was not built (or cannot load here) the code that uses it takes its other path.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { checkoutDir } from '../checkout.js';

const loaded = new Map<string, unknown>();

/** The addon `name` (`native/build/<name>.node`), or null when it was not built or cannot load; loaded once. */
export function nativeAddon<T>(name: string): T | null {
  if (!loaded.has(name)) {
    try {
      loaded.set(name, createRequire(import.meta.url)(join(checkoutDir(), 'native', 'build', `${name}.node`)));
    } catch {
      loaded.set(name, null);
    }
  }
  return loaded.get(name) as T | null;
}
