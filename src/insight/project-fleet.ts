/**
 * Actions on every connected QGIS Server instance at once: reload a project everywhere, and pin
 * projects, which each instance loads as soon as it registers, before its first client asks.
 */
import { NotFound } from '../errors.js';
import { type ReloadResult } from '../monitor/protocol.js';
import { type InstanceDirectory, type InstanceRegistry, type MonitorLogger } from '../monitor/registry.js';
import { type Pin, type ProjectPins } from '../services/pins.js';
import { type ProjectRepository } from '../services/repository.js';
import { type ProjectRef } from '../storage/project-store.js';

export type InstanceReload = ReloadResult & { instance: string };

export interface FleetOptions {
  /** Every instance, whichever Steward process it is connected to. */
  instances: InstanceDirectory | undefined;
  /** The instances connected to this process: it loads the pinned projects into them. */
  registry: InstanceRegistry | undefined;
  repository: ProjectRepository;
  pins: ProjectPins;
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
    if (!instances) throw new NotFound(DISABLED, { code: 'feature_disabled' });
    if (!(await this.options.repository.exists(ref)))
      throw new NotFound(`Project ${ref.name} does not exist.`, { code: 'project_not_found' });
    return this.reloadEverywhere(instances, ref);
  }

  /** Pins the project, and has every registered instance load it now; one answer per instance. */
  async pin(ref: ProjectRef): Promise<InstanceReload[]> {
    await this.options.pins.set(ref, true);
    const instances = this.options.instances;
    return instances ? this.reloadEverywhere(instances, ref) : [];
  }

  private async reloadEverywhere(instances: InstanceDirectory, ref: ProjectRef): Promise<InstanceReload[]> {
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
    let pins: Pin[];
    try {
      pins = await this.options.pins.list();
    } catch (error) {
      this.options.log.warn(`cannot read the pinned projects for instance ${id}: ${reason(error)}`);
      return;
    }
    for (const pin of pins) {
      const outcome = await this.reloadOn(registry, id, pin.map);
      const message = `pinned project ${pin.project} on instance ${id}: ${outcome.status}`;
      if (outcome.status === 'reloaded' || outcome.status === 'pending') this.options.log.info(message);
      else this.options.log.warn(`${message}${outcome.error ? ` (${outcome.error})` : ''}`);
    }
  }
}
