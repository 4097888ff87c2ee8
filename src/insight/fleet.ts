/**
 * Actions on every connected QGIS Server instance at once: reload a project everywhere, and load
 * the pinned projects into each instance as soon as it registers, before its first client asks.
 */
import { NotFound } from '../errors.js';
import { type ReloadResult } from '../monitor/protocol.js';
import { type InstanceDirectory, type InstanceRegistry, type MonitorLogger } from '../monitor/registry.js';
import { type ProjectRepository } from '../services/repository.js';
import { type ProjectRef } from '../storage/project-store.js';

export type InstanceReload = ReloadResult & { instance: string };

export interface FleetOptions {
  /** Every instance, whichever Steward process it is connected to. */
  instances: InstanceDirectory | undefined;
  /** The instances connected to this process: it loads the pinned projects into them. */
  registry: InstanceRegistry | undefined;
  repository: ProjectRepository;
  /** Projects each instance loads as soon as it registers. */
  pinned: readonly ProjectRef[];
  log: MonitorLogger;
}

const DISABLED = 'Monitoring is not enabled: set STEWARD_QGISSERVER_MONITORING_PORT.';

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ProjectFleet {
  constructor(private readonly options: FleetOptions) {
    options.registry?.watch({ registered: ({ id }) => void this.loadPinned(id), forgotten: () => {} });
  }

  /** Has every registered instance drop `ref` from its cache and load it again; one answer per instance. */
  async reload(ref: ProjectRef): Promise<InstanceReload[]> {
    const instances = this.options.instances;
    if (!instances) throw new NotFound(DISABLED);
    if (!(await this.options.repository.exists(ref))) throw new NotFound(`Project ${ref.name} does not exist.`);
    const map = await this.options.repository.store.mapParameter(ref);
    return Promise.all((await instances.list()).map(({ id }) => this.reloadOn(instances, id, map)));
  }

  private async reloadOn(instances: InstanceDirectory, id: string, map: string): Promise<InstanceReload> {
    try {
      return { instance: id, ...(await instances.request(id, 'reload', { map })) };
    } catch (error) {
      return { instance: id, map, status: 'failed', error: reason(error) };
    }
  }

  private async loadPinned(id: string): Promise<void> {
    const registry = this.options.registry;
    if (!registry) return;
    for (const ref of this.options.pinned) {
      const outcome = await this.options.repository.store.mapParameter(ref).then(
        (map) => this.reloadOn(registry, id, map),
        (error: unknown) => ({ status: 'failed', error: reason(error) }),
      );
      const message = `pinned project ${ref.name} on instance ${id}: ${outcome.status}`;
      if (outcome.status === 'reloaded' || outcome.status === 'pending') this.options.log.info(message);
      else this.options.log.warn(`${message}${outcome.error ? ` (${outcome.error})` : ''}`);
    }
  }
}
