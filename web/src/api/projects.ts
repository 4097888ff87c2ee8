/** Project references in console URLs: a name, and a schema for projects kept in PostgreSQL. */
export interface ProjectRef {
  project: string;
  schema?: string | undefined;
}

export function projectRef(params: Record<string, string>, query: URLSearchParams): ProjectRef {
  return { project: params['project'] ?? '', schema: query.get('schema') ?? undefined };
}

/** The console path of a project's page, or of one of its sub-pages. */
export function projectPath(ref: ProjectRef, sub = ''): string {
  const base = `/projects/${encodeURIComponent(ref.project)}${sub}`;
  return ref.schema ? `${base}?schema=${encodeURIComponent(ref.schema)}` : base;
}

export function schemaQuery(ref: ProjectRef): { schema?: string } {
  return ref.schema ? { schema: ref.schema } : {};
}
