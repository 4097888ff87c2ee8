/**
 * The `wms` provider, which QGIS uses for WMS, WMTS and XYZ tiles alike: `key=value` pairs joined
 * by `&`, percent-encoded (`type=xyz&url=https://tile.example/%7Bz%7D/%7Bx%7D/%7By%7D.png`).
 * A layer is checked against its service: the capabilities of a WMS or WMTS, a tile of an XYZ.
 */
import { maskPasswords } from '../../qgis/datasource-uri.js';
import { errorMessage, type Provider, type SourceContext, type SourceState } from './provider.js';

/** How long a service's answer stands for every layer of it. */
const ANSWER_TTL_MS = 30_000;
const SERVICE_TIMEOUT_MS = 10_000;
/** Service answers remembered at most (one per URL asked). */
const MAX_REMEMBERED = 256;

/** The parameters of a web datasource, decoded as QGIS decodes them (no `+` for a space). */
export function webParameters(datasource: string): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const pair of datasource.split('&')) {
    const at = pair.indexOf('=');
    const [key, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    try {
      parameters.set(decodeURIComponent(key), decodeURIComponent(value));
    } catch {
      parameters.set(key, value);
    }
  }
  return parameters;
}

/** The URL that tells whether the service serves the layer: a tile of an XYZ, else the capabilities. */
function probeUrl(parameters: Map<string, string>): string | undefined {
  const url = parameters.get('url');
  if (!url) return undefined;
  const type = parameters.get('type')?.toLowerCase();
  if (type === 'xyz') {
    const zoom = Number(parameters.get('zmin') ?? 0) || 0;
    return url
      .replace(/\{z\}/g, String(zoom))
      .replace(/\{-?[xy]\}/g, '0')
      .replace(/\{q\}/g, '0'.repeat(zoom));
  }
  if (type === 'wmts' && !/[?&]service=/i.test(url)) return url;
  const capabilities = new URL(url);
  for (const [name, value] of Object.entries({
    SERVICE: type === 'wmts' ? 'WMTS' : 'WMS',
    REQUEST: 'GetCapabilities',
  })) {
    if (![...capabilities.searchParams.keys()].some((key) => key.toUpperCase() === name)) {
      capabilities.searchParams.set(name, value);
    }
  }
  return capabilities.toString();
}

interface Answer {
  state: SourceState;
  expires: number;
}

export class WebServiceProvider implements Provider {
  readonly key = 'wms';
  private readonly answers = new Map<string, Answer>();

  describe(datasource: string): string {
    return maskPasswords(datasource);
  }

  async inspect(datasource: string, context: SourceContext): Promise<SourceState> {
    const parameters = webParameters(datasource);
    let url: string | undefined;
    try {
      url = probeUrl(parameters);
    } catch (error) {
      return { valid: false, reason: `the service URL is not valid: ${errorMessage(error)}` };
    }
    if (url === undefined) return { valid: false, reason: 'the datasource names no service url=' };
    const remembered = this.answers.get(url);
    if (remembered && remembered.expires > Date.now() && !context.fresh) return remembered.state;
    const state = await ask(url, parameters.get('type') === 'xyz' ? 'tile' : 'capabilities');
    if (this.answers.size >= MAX_REMEMBERED) this.answers.delete(this.answers.keys().next().value as string);
    this.answers.set(url, { state, expires: Date.now() + ANSWER_TTL_MS });
    return state;
  }

  async confine(): Promise<void> {
    // A web service is not the server's files.
  }

  gdalSource(): undefined {
    return undefined;
  }
}

async function ask(url: string, what: 'tile' | 'capabilities'): Promise<SourceState> {
  const shown = maskPasswords(url);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS) });
    const body = await response.text();
    if (!response.ok) return { valid: false, reason: `the service answered ${response.status} to ${shown}` };
    if (what === 'capabilities' && (!/Capabilities/.test(body) || /ServiceException/.test(body))) {
      return { valid: false, reason: `the service gave no capabilities at ${shown}` };
    }
    return { valid: true };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : errorMessage(error);
    return { valid: false, reason: `the service did not answer at ${shown}: ${cause}` };
  }
}
