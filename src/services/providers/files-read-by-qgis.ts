/**
 * The `delimitedtext` provider: a CSV or other text file QGIS reads itself, named as a URL
 * (`file:///data/wells.csv?type=csv&xField=x&yField=y`, or `file:./wells.csv?...` beside the project).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { maskPasswords } from '../../qgis/datasource-uri.js';
import { type DataRoots } from '../data-roots.js';
import { errorMessage, type Provider, type SourceContext, type SourceState } from './provider.js';

/** The file a delimited text datasource names, resolved against the project when relative. */
export function delimitedTextFile(datasource: string, projectDir: string | undefined): string {
  const [location = ''] = datasource.split('?', 1);
  const path = decodeURIComponent(location.replace(/^file:(\/\/(?=\/))?/, ''));
  return /^\.\.?\//.test(path) && projectDir !== undefined ? resolve(projectDir, path) : path;
}

export class DelimitedTextProvider implements Provider {
  readonly key = 'delimitedtext';

  constructor(private readonly dataRoots: DataRoots) {}

  describe(datasource: string): string {
    return maskPasswords(datasource);
  }

  async inspect(datasource: string, context: SourceContext): Promise<SourceState> {
    try {
      await this.confine(datasource, context);
    } catch (error) {
      return { valid: false, reason: errorMessage(error) };
    }
    const file = delimitedTextFile(datasource, context.projectDir);
    return existsSync(file) ? { valid: true } : { valid: false, reason: `${file} does not exist` };
  }

  async confine(datasource: string, context: SourceContext): Promise<void> {
    await this.dataRoots.checkDataset(delimitedTextFile(datasource, context.projectDir));
  }

  gdalSource(): undefined {
    return undefined;
  }
}
