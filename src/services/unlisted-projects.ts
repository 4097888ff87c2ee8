/**
 * Project files the store holds where Steward does not look for projects (`<name>/<name>.qgs` or
 * `.qgz` in the projects folder): a `.qgs` copied beside the project folders, a folder whose file
 * has another name. They are served under no name, so they are told with why and how to serve them.
 */
import { BadRequest } from '../errors.js';
import { type ProjectStore } from '../storage/project-store.js';
import { checkName } from './names.js';

export interface UnlistedProject {
  /** Its path in the projects folder. */
  file: string;
  /** Why Steward serves it under no name. */
  reason: string;
  /** What makes it served. */
  remedy: string;
}

/** Where Steward serves project `name` from, as the messages say it. */
export function servedFile(name: string, extension = '.qgs'): string {
  return `${name}/${name}${extension}`;
}

/** Why a project name cannot be `name`, or undefined when it can. */
function nameProblem(name: string): string | undefined {
  try {
    checkName('project', name);
    return undefined;
  } catch (error) {
    if (error instanceof BadRequest) return error.message;
    throw error;
  }
}

/** Moving `file` to `<name>/<name><extension>`, the name being `name` when Steward accepts it and is free. */
function remedy(name: string, extension: string, served: ReadonlySet<string>): string {
  const problem = nameProblem(name);
  if (problem !== undefined) return `move it to <name>/<name>${extension} under a name Steward accepts (${problem})`;
  if (served.has(name))
    return `project "${name}" is served already: move it to <name>/<name>${extension} under another name`;
  return `move it to ${servedFile(name, extension)} to serve it as project "${name}"`;
}

export function explainUnlisted(file: string, served: ReadonlySet<string>): UnlistedProject {
  const extension = file.slice(file.lastIndexOf('.'));
  const slash = file.indexOf('/');
  if (slash === -1) {
    const name = file.slice(0, -extension.length);
    return {
      file,
      reason: `${file} lies beside the project folders, where Steward serves no project from (project "${name}" is served from ${servedFile(name)} or .qgz)`,
      remedy: remedy(name, extension, served),
    };
  }
  const folder = file.slice(0, slash);
  return {
    file,
    reason: `folder "${folder}" holds no ${folder}.qgs or ${folder}.qgz, the file Steward serves project "${folder}" from`,
    remedy: remedy(folder, extension, served),
  };
}

/** The project files of `store` served under no name; `served` are the names it lists. */
export async function unlistedProjects(store: ProjectStore, served: readonly string[]): Promise<UnlistedProject[]> {
  const files = (await store.unlistedFiles?.()) ?? [];
  const names = new Set(served);
  return files.map((file) => explainUnlisted(file, names));
}
