/** Where a project lives: its name, and its schema when projects are stored in PostgreSQL. */
export interface ProjectRef {
  name: string;
  schema: string;
}
