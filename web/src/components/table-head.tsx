import type { JSX } from 'preact';

/** How a sortable column is sorted now, as `aria-sort` says it. */
export type SortState = 'ascending' | 'descending' | 'none';

/**
 * A column heading: its text, whether it holds numbers (aligned to the right), and for a column
 * the table can be sorted by, how it is sorted and what sorts it.
 */
export type Column = string | { label: string; numeric?: true; sort?: { state: SortState; onSort: () => void } };

const ARROWS: Record<SortState, string> = { ascending: ' ▲', descending: ' ▼', none: '' };

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
              <th
                key={column.label}
                scope="col"
                class={column.numeric ? 'number' : undefined}
                aria-sort={column.sort?.state}
              >
                {column.sort ? (
                  <button type="button" class="sort" onClick={column.sort.onSort}>
                    {column.label}
                    <span aria-hidden="true">{ARROWS[column.sort.state]}</span>
                  </button>
                ) : (
                  column.label
                )}
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
