/**
 * Providers whose layers live in the project itself or in other layers: `memory` (features kept in
 * the project, valid as QGIS reads them) and `virtual` (an SQL query over layers, which may embed
 * sources of other providers: those are checked by their own providers).
 */
import { maskPasswords } from '../../qgis/datasource-uri.js';
import { type Provider, type SourceContext, type SourceState } from './provider.js';

/**
 * A provider whose layers read no file Steward can check: `memory` (valid as QGIS reads it), and
 * the fallback for keys Steward does not know, which QGIS Server's own answer checks.
 */
export class UncheckedProvider implements Provider {
  constructor(readonly key: string) {}

  describe(datasource: string): string {
    return maskPasswords(datasource);
  }

  async inspect(): Promise<SourceState> {
    return { valid: true };
  }

  async confine(): Promise<void> {
    // Nothing Steward knows of is read.
  }

  gdalSource(): undefined {
    return undefined;
  }
}

/** An embedded source of a virtual layer: `layer=<provider>:<source>:<name>:<encoding>`, percent-encoded. */
interface EmbeddedSource {
  provider: string;
  source: string;
}

function embeddedSources(datasource: string): EmbeddedSource[] {
  const query = datasource.startsWith('?') ? datasource.slice(1) : datasource;
  const sources: EmbeddedSource[] = [];
  for (const [key, value] of new URLSearchParams(query)) {
    if (key !== 'layer') continue;
    const [provider = '', source = ''] = value.split(':').map((part) => decodeURIComponent(part));
    sources.push({ provider, source });
  }
  return sources;
}

export class VirtualProvider implements Provider {
  readonly key = 'virtual';

  constructor(private readonly providerOf: (key: string) => Provider) {}

  describe(datasource: string): string {
    return maskPasswords(datasource);
  }

  async inspect(datasource: string, context: SourceContext): Promise<SourceState> {
    for (const { provider, source } of embeddedSources(datasource)) {
      const state = await this.providerOf(provider).inspect(source, { ...context, type: 'vector' });
      if (!state.valid) return { valid: false, reason: `its layer ${maskPasswords(source)}: ${state.reason ?? ''}` };
    }
    return { valid: true };
  }

  async confine(datasource: string, context: SourceContext): Promise<void> {
    for (const { provider, source } of embeddedSources(datasource)) {
      await this.providerOf(provider).confine(source, { ...context, type: 'vector' });
    }
  }

  gdalSource(): undefined {
    return undefined;
  }
}
