import type { JSX } from 'preact';

interface PagerProps {
  /** What is paged, in the plural and capitalised: "Projects", "Features". */
  what: string;
  total: number;
  offset: number;
  limit: number;
  /** Rows of this page. */
  shown: number;
  onOffset: (offset: number) => void;
}

/** Which rows of how many a page shows, and the way to the pages before and after. */
export function Pager({ what, total, offset, limit, shown, onOffset }: PagerProps): JSX.Element {
  return (
    <nav class="pager" aria-label={`Pages of ${what.toLowerCase()}`}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous page
      </button>
      <span role="status">
        {what} {shown === 0 ? 0 : offset + 1}–{offset + shown} of {total}
      </span>
      <button type="button" disabled={offset + limit >= total} onClick={() => onOffset(offset + limit)}>
        Next page
      </button>
    </nav>
  );
}
