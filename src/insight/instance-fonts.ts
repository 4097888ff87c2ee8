/**
 * The font families QGIS Server can draw text with, where it runs: each connected instance reports
 * its Qt font families through the monitoring plugin (`about`). Without an instance to ask
 * (monitoring off, none connected, none answering), the families fontconfig lists on Steward's
 * own machine stand in, which is QGIS Server's machine when they run together.
 */
import { type InstanceDirectory } from '../monitor/registry.js';

/** Where QGIS Server's fonts were read, and each place's families, lower-cased. */
export type FontHosts =
  | { source: 'instances'; instances: Array<{ id: string; families: Set<string> }> }
  | { source: 'local'; why: string; families: Set<string> }
  | { source: 'unknown'; why: string };

/** A font a style uses that QGIS Server lacks somewhere. */
export interface FontAbsence {
  family: string;
  /** True when no instance has it (or this machine lacks it, or it could not be looked for). */
  nowhere: boolean;
  /** The instances that lack it; empty when the families were not the instances'. */
  instances: string[];
  message: string;
}

const OTHER_FONT = 'QGIS Server draws its text with another font';

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class InstanceFonts {
  /**
   * `instances`: the connected instances, undefined when monitoring is off; `local`: the
   * families fontconfig lists on this machine, lower-cased, with those of `wanted` its matching
   * gives a font of the configuration's choice.
   */
  constructor(
    private readonly instances: InstanceDirectory | undefined,
    private readonly local: (wanted: readonly string[]) => Promise<Set<string>>,
  ) {}

  /** The families of every instance that answers; else this machine's, saying why. `wanted`: the families to be looked for. */
  async hosts(wanted: readonly string[] = []): Promise<FontHosts> {
    const directory = this.instances;
    if (!directory) return this.localHosts('monitoring is off', wanted);
    const listed = await Promise.resolve(directory.list()).catch(() => []);
    if (listed.length === 0) return this.localHosts('no QGIS Server instance is connected', wanted);
    const answers = await Promise.all(
      listed.map(async ({ id }) => {
        const about = await directory.request(id, 'about').catch(() => undefined);
        return about && { id, families: new Set(about.fonts.map((family) => family.toLowerCase())) };
      }),
    );
    const instances = answers.filter((answer) => answer !== undefined);
    if (instances.length === 0) return this.localHosts('no QGIS Server instance told its fonts', wanted);
    return { source: 'instances', instances };
  }

  private async localHosts(why: string, wanted: readonly string[]): Promise<FontHosts> {
    try {
      return { source: 'local', why, families: await this.local(wanted) };
    } catch (error) {
      return { source: 'unknown', why: `${why}, and fontconfig could not list this machine's: ${reason(error)}` };
    }
  }
}

/** The families (as the style names them) that QGIS Server lacks on some instance, or everywhere. */
export function fontAbsences(hosts: FontHosts, families: readonly string[]): FontAbsence[] {
  return families.flatMap((family) => fontAbsence(hosts, family) ?? []);
}

function fontAbsence(hosts: FontHosts, family: string): FontAbsence | undefined {
  const key = family.toLowerCase();
  if (hosts.source === 'unknown') {
    return { family, nowhere: true, instances: [], message: `font "${family}" could not be looked for: ${hosts.why}` };
  }
  if (hosts.source === 'local') {
    if (hosts.families.has(key)) return undefined;
    const message = `font "${family}" is not installed on Steward's machine (${hosts.why}, so its fonts were looked at); ${OTHER_FONT}`;
    return { family, nowhere: true, instances: [], message };
  }
  const lacking = hosts.instances.filter((instance) => !instance.families.has(key)).map(({ id }) => id);
  if (lacking.length === 0) return undefined;
  const nowhere = lacking.length === hosts.instances.length;
  const message = nowhere
    ? `font "${family}" is installed on no QGIS Server instance (${lacking.join(', ')}); ${OTHER_FONT}`
    : `font "${family}" is not installed on QGIS Server instance${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}, which draw${lacking.length > 1 ? '' : 's'} its text with another font`;
  return { family, nowhere, instances: lacking, message };
}
