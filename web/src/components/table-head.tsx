import type { JSX } from 'preact';

/** A column heading: its text, and whether it holds numbers (aligned to the right). */
export type Column = string | { label: string; numeric: true };

interface TableHeadProps {
  /** What the table lists, read by screen readers only. */
  caption: string;
  columns: Column[];
  /** A last column of buttons, named for screen readers only. */
  actions?: boolean;
}

/** A table's hidden caption and its row of column headings. */
export function TableHead({ caption, columns, actions = false }: TableHeadProps): JSX.Element {
  return (
    <>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) =>
            typeof column === 'string' ? (
              <th key={column} scope="col">
                {column}
              </th>
            ) : (
              <th key={column.label} scope="col" class="number">
                {column.label}
              </th>
            ),
          )}
          {actions && (
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
    </>
  );
}
