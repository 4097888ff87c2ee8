import { isIPv6 } from 'node:net';

/** The window wrong tokens are counted over. */
export const FAILURE_WINDOW_MS = 60_000;

/** Addresses counted at once; past it, windows that have ended are dropped before a new one is opened. */
const MAX_TRACKED = 10_000;

/**
 * The key an address is counted under: IPv4 as it is (also when mapped into IPv6), IPv6 by its
 * /64, the smallest network a site is given, so that one client cannot try again from each of
 * its own addresses.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] ?? address;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back]
    : front;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

interface Window {
  failures: number;
  endsAt: number;
}

/**
 * Wrong tokens counted per address (addressKey) over a fixed minute: past `limit` in one minute,
 * the address is refused, right token or not, until that minute ends.
 */
export class TokenFailures {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the address may try again, or undefined when it may now. */
  retryAfter(address: string): number | undefined {
    const window = this.windows.get(addressKey(address));
    const now = this.now();
    if (window === undefined || window.endsAt <= now || window.failures < this.limit) return undefined;
    return Math.max(1, Math.ceil((window.endsAt - now) / 1000));
  }

  /** Counts a wrong token from the address. */
  failed(address: string): void {
    const key = addressKey(address);
    const now = this.now();
    const window = this.windows.get(key);
    if (window !== undefined && window.endsAt > now) {
      window.failures++;
      return;
    }
    if (window === undefined && this.windows.size >= MAX_TRACKED) this.makeRoom(now);
    this.windows.set(key, { failures: 1, endsAt: now + FAILURE_WINDOW_MS });
  }

  /** Drops the windows that have ended, else the oldest one, so that the map stays bounded. */
  private makeRoom(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    const oldest = this.windows.keys().next();
    if (this.windows.size >= MAX_TRACKED && !oldest.done) this.windows.delete(oldest.value);
  }
}
