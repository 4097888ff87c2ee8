/**
 * Project checks: what is wrong with a project as QGIS Server will serve it. Each layer's
 * datasource is checked by its provider, the files and fonts its styles name are looked for, its CRS is
 * resolved, and QGIS Server is asked (WMS GetCapabilities) whether it loads the project and which
 * layers it publishes.
 */
import { dirname, isAbsolute } from 'node:path';

import { DOMParser } from '@xmldom/xmldom';

import { type CrsResolver } from '../gdal/crs.js';
import { type InstanceDirectory } from '../monitor/registry.js';
import { type LayerEntry, type ProjectDocument } from '../qgis/project.js';
import { styleReferences } from '../qgis/style-references.js';
import { repairHint } from '../services/datasource-repair.js';
import { type LayerService } from '../services/layers.js';
import { type ProjectRepository } from '../services/repository.js';
import { type StyleFiles } from '../services/style-files.js';
import { type UnlistedProject } from '../services/unlisted-projects.js';
import { type ProjectRef } from '../storage/project-store.js';
import { fontAbsences, type FontHosts, type InstanceFonts } from './instance-fonts.js';

export type FindingKind = 'datasource' | 'server' | 'svg' | 'image' | 'font' | 'crs' | 'layout';

export interface Finding {
  kind: FindingKind;
  message: string;
}

export type LayerStatus = 'ok' | 'degraded' | 'broken';

export interface LayerCheck {
  name: string;
  status: LayerStatus;
  findings: Finding[];
}

export interface ProjectCheck {
  status: 'ok' | 'degraded' | 'broken';
  layers: LayerCheck[];
  /** Findings about the project as a whole (QGIS Server refusing it). */
  findings: Finding[];
}

/** The check of a project file Steward serves under no name: QGIS Server is never given it. */
export function unlistedCheck(project: UnlistedProject): ProjectCheck {
  return {
    status: 'broken',
    layers: [],
    findings: [{ kind: 'layout', message: `${project.reason}; ${project.remedy}` }],
  };
}

/** Kinds that make a layer unusable; the others draw it wrongly (a "?" marker, another font). */
const BREAKING: ReadonlySet<FindingKind> = new Set(['datasource', 'server']);
const SERVER_TIMEOUT_MS = 30_000;

export interface CheckerOptions {
  repository: ProjectRepository;
  layers: LayerService;
  crs: CrsResolver;
  /** The project's URL at QGIS Server (`...?MAP=...`). */
  projectUrl(ref: ProjectRef): Promise<URL>;
  /** The connected instances, asked which layers of their cached copy are not valid. */
  instances?: InstanceDirectory | undefined;
  /** The fonts of those instances (of this machine without them). */
  fonts: InstanceFonts;
  /** Where the files styles name may be read from. */
  styleFiles: StyleFiles;
  /** STEWARD_API_TOKEN: nginx asks Steward about each request to QGIS Server, which must get through. */
  apiToken?: string | undefined;
}

interface ServerAnswer {
  /** The layer names QGIS Server publishes; undefined when it refused the project. */
  published: Set<string> | undefined;
  findings: Finding[];
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ProjectChecker {
  constructor(private readonly options: CheckerOptions) {}

  async check(ref: ProjectRef): Promise<ProjectCheck> {
    const document = await this.options.repository.read(ref);
    const projectFile = await this.options.repository.store.mapParameter(ref);
    const [server, checked, invalid] = await Promise.all([
      this.askServer(ref),
      this.layerFindings(ref, document),
      this.invalidOnInstances(projectFile),
    ]);
    const layers = checked.map(({ entry, findings }) => {
      if (server.published && !server.published.has(document.wmsName(entry))) {
        findings.push({ kind: 'server', message: `QGIS Server does not publish layer "${entry.name}"` });
      }
      for (const id of invalid.get(entry.name) ?? []) {
        findings.push({ kind: 'server', message: `instance ${id} holds layer "${entry.name}" as not valid` });
      }
      return { name: entry.name, status: layerStatus(findings), findings };
    });
    const status =
      server.published === undefined ? 'broken' : layers.some((layer) => layer.status !== 'ok') ? 'degraded' : 'ok';
    return { status, layers, findings: server.findings };
  }

  /**
   * The layers of `document`, stored as `ref` or about to be, checked as QGIS will read them there
   * (datasources, CRSs, the files and fonts of their styles), without asking QGIS Server.
   */
  async checkLayers(ref: ProjectRef, document: ProjectDocument): Promise<LayerCheck[]> {
    const checked = await this.layerFindings(ref, document);
    return checked.map(({ entry, findings }) => ({ name: entry.name, status: layerStatus(findings), findings }));
  }

  private async layerFindings(
    ref: ProjectRef,
    document: ProjectDocument,
  ): Promise<Array<{ entry: LayerEntry; findings: Finding[] }>> {
    const projectFile = await this.options.repository.store.mapParameter(ref);
    const projectDir = isAbsolute(projectFile) ? dirname(projectFile) : undefined;
    const entries = document.layers();
    const references = entries.map((entry) => {
      const element = document.mapLayerElement(entry.name);
      return element && styleReferences(element);
    });
    const fonts = await this.options.fonts.hosts([...new Set(references.flatMap((found) => found?.fonts ?? []))]);
    return Promise.all(
      entries.map(async (entry, index) => {
        const found = references[index];
        const findings = [
          ...(await this.datasource(ref, entry)),
          ...this.crs(entry),
          ...(found ? await this.styles(found, projectDir, fonts) : []),
        ];
        return { entry, findings };
      }),
    );
  }

  /** Layer name -> the instances whose cached copy of the project (MAP `map`) holds it as not valid. */
  private async invalidOnInstances(map: string): Promise<Map<string, string[]>> {
    const invalid = new Map<string, string[]>();
    const instances = this.options.instances;
    if (!instances) return invalid;
    const listed = await Promise.resolve(instances.list()).catch(() => []);
    await Promise.all(
      listed.map(async ({ id }) => {
        const cached = await instances.request(id, 'projects').catch(() => undefined);
        const project = cached?.projects.find((entry) => entry.map === map);
        for (const layer of project?.invalid_layers ?? []) invalid.set(layer, [...(invalid.get(layer) ?? []), id]);
      }),
    );
    return invalid;
  }

  private async datasource(ref: ProjectRef, entry: LayerEntry): Promise<Finding[]> {
    const state = await this.options.layers.inspect(ref, entry, true);
    if (state.valid) return [];
    const source = this.options.layers.describe(entry);
    const reason = state.reason ?? 'not valid';
    return [{ kind: 'datasource', message: `cannot open ${source}: ${reason}; ${repairHint(ref, entry.name)}` }];
  }

  private crs(entry: LayerEntry): Finding[] {
    if (entry.authid === '') return [{ kind: 'crs', message: 'the layer has no CRS' }];
    if (/^USER:/i.test(entry.authid)) {
      return [{ kind: 'crs', message: `${entry.authid} is a user-defined CRS of one QGIS Desktop, unknown elsewhere` }];
    }
    if (!this.options.crs.fromAuthid(entry.authid)) {
      return [{ kind: 'crs', message: `${entry.authid} is not a CRS QGIS knows` }];
    }
    return [];
  }

  private async styles(
    references: ReturnType<typeof styleReferences>,
    projectDir: string | undefined,
    fonts: FontHosts,
  ): Promise<Finding[]> {
    const findings: Finding[] = [];
    const files = this.options.styleFiles;
    for (const file of references.svg) {
      if (!(await files.found(file, 'svg', projectDir)))
        findings.push({ kind: 'svg', message: `SVG file ${file} is missing` });
    }
    for (const file of references.images) {
      if (!(await files.found(file, 'image', projectDir)))
        findings.push({ kind: 'image', message: `image file ${file} is missing` });
    }
    for (const url of files.refusedRemote(references))
      findings.push({ kind: 'image', message: `${url} is on a host STEWARD_STYLE_REMOTE_HOSTS does not allow` });
    for (const absence of fontAbsences(fonts, references.fonts))
      findings.push({ kind: 'font', message: absence.message });
    return findings;
  }

  private async askServer(ref: ProjectRef): Promise<ServerAnswer> {
    const url = await this.options.projectUrl(ref);
    for (const [name, value] of Object.entries({ SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' })) {
      url.searchParams.set(name, value);
    }
    let text: string;
    try {
      const token = this.options.apiToken;
      const headers = token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } };
      text = await (await fetch(url, { signal: AbortSignal.timeout(SERVER_TIMEOUT_MS), ...headers })).text();
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : message(error);
      return { published: undefined, findings: [{ kind: 'server', message: `QGIS Server did not answer: ${cause}` }] };
    }
    const document = new DOMParser({ onError: () => {} }).parseFromString(text, 'text/xml');
    const exceptions = Array.from(document.getElementsByTagName('ServiceException'), (node) => node.textContent ?? '');
    if (exceptions.length > 0 || !text.includes('WMS_Capabilities')) {
      const reason = exceptions.join('; ').trim() || text.slice(0, 200);
      return {
        published: undefined,
        findings: [{ kind: 'server', message: `QGIS Server refuses the project: ${reason}` }],
      };
    }
    const published = new Set<string>();
    for (const layer of Array.from(document.getElementsByTagName('Layer'))) {
      const name = Array.from(layer.childNodes).find((child) => child.nodeName === 'Name');
      if (name?.textContent) published.add(name.textContent);
    }
    return { published, findings: [] };
  }
}

function layerStatus(findings: Finding[]): LayerStatus {
  if (findings.some((finding) => BREAKING.has(finding.kind))) return 'broken';
  return findings.length > 0 ? 'degraded' : 'ok';
}
