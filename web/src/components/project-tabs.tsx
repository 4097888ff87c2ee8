import type { JSX } from 'preact';

import { projectPath, type ProjectRef } from '../api/projects';
import { Link } from '../router';

const TABS = [
  ['', 'Map and layers'],
  ['/cache', 'Tile cache'],
  ['/processing', 'Processing'],
  ['/history', 'History'],
  ['/publish', 'Publish'],
  ['/services', 'Services'],
] as const;

/** The breadcrumb and the sub-pages of a project. */
export function ProjectTabs({ project, current }: { project: ProjectRef; current: string }): JSX.Element {
  return (
    <>
      <p class="breadcrumb">
        <Link href={project.schema ? `/?schema=${encodeURIComponent(project.schema)}` : '/'}>Projects</Link> /{' '}
        {project.project}
      </p>
      <nav class="tabs" aria-label={`Pages of project ${project.project}`}>
        {TABS.map(([sub, name]) => (
          <Link key={sub} href={projectPath(project, sub)} aria-current={sub === current ? 'page' : undefined}>
            {name}
          </Link>
        ))}
      </nav>
    </>
  );
}
