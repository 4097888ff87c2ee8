/**
 * Swapping two files' names in one step (Linux's renameat2 with RENAME_EXCHANGE), through the small
 * addon native/rename-exchange.c that scripts/setup.sh builds. Replacing a file this way, rather
 * than renaming the new file over it, is as atomic for readers, and on ext4 it does not start
 * writing the new file to the disk there and then (auto_da_alloc): a project rewritten many times
 * a second leaves most of its versions in the system's cache, never written out. docs/storage.md.
 */
import { nativeAddon } from './native-addon.js';

interface ExchangeAddon {
  exchange(first: string, second: string): Promise<void>;
}

/** Errors that mean this file system or kernel cannot exchange names, rather than that a file is amiss. */
const UNSUPPORTED = new Set(['EINVAL', 'ENOSYS', 'EOPNOTSUPP', 'EXDEV']);

/** The addon, or null when it was not built (or cannot load here). */
function loadAddon(): ExchangeAddon | null {
  return nativeAddon<ExchangeAddon>('rename-exchange');
}

/** Whether names can be exchanged at all in this process (the addon is built and loads). */
export function canExchange(): boolean {
  return loadAddon() !== null;
}

/**
 * Gives `first` the file `second` named and `second` the file `first` named, in one step. False,
 * with both files as they were, when there is no addon or the file system cannot exchange names
 * (or `second` does not exist); other failures reject.
 */
export async function exchangeNames(first: string, second: string): Promise<boolean> {
  const loaded = loadAddon();
  if (!loaded) return false;
  try {
    await loaded.exchange(first, second);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (UNSUPPORTED.has(code) || code === 'ENOENT') return false;
    throw error;
  }
}
