import type { JSX } from 'preact';

import { projectPath, type ProjectRef } from '../api/projects';
import { Link } from '../router';
import { useProjectAccess } from './use-access';

const TABS = [
  ['', 'Map and layers'],
  ['/cache', 'Tile cache'],
  ['/processing', 'Processing'],
  ['/history', 'History'],
  ['/publish', 'Publish'],
  ['/services', 'Services'],
] as const;

/** The breadcrumb and the sub-pages of a project, and a word when one may only read it. */
export function ProjectTabs({ project, current }: { project: ProjectRef; current: string }): JSX.Element {
  const access = useProjectAccess(project);
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
      {access === 'read' && (
        <p class="muted" data-testid="read-only">
          Your token may read this project, not change it: its changes are for those who may write it.
        </p>
      )}
    </>
  );
}
