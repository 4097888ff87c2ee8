/**
 * The entries of an archive a client sent from QGIS Desktop (a style package, a project bundle):
 * which entry a path of the client's machine names, and what to leave out.
 */
import { posix } from 'node:path';

/** A file QGIS Desktop names, as a path of segments, whatever separator QGIS Desktop's system used. */
function segments(file: string): string[] {
  return file
    .replace(/^file:\/\//i, '')
    .split(/[/\\]/)
    .filter((segment) => segment !== '' && segment !== '.');
}

/**
 * The archive entry a file named by QGIS Desktop is: the entry whose path ends the file's path, the
 * longest such; else the one entry with the file's name.
 */
export function packagedEntry(file: string, entries: string[]): string | undefined {
  const wanted = segments(file);
  const endsWanted = (entry: string): boolean => {
    const parts = entry.split('/');
    return (
      parts.length <= wanted.length &&
      parts.every((part, index) => part === wanted[wanted.length - parts.length + index])
    );
  };
  const suffixes = entries.filter(endsWanted).sort((a, b) => b.split('/').length - a.split('/').length);
  if (suffixes[0] !== undefined) return suffixes[0];
  const named = entries.filter((entry) => posix.basename(entry) === wanted[wanted.length - 1]);
  return named.length === 1 ? named[0] : undefined;
}

/** What the systems that zip folders add of their own: macOS's `__MACOSX/` and `._*` forks, `.DS_Store`, `Thumbs.db`. */
export function isSystemFile(entry: string): boolean {
  const name = posix.basename(entry);
  return entry.startsWith('__MACOSX/') || name.startsWith('._') || name === '.DS_Store' || name === 'Thumbs.db';
}

export function withoutSystemFiles(entries: Map<string, Buffer>): Map<string, Buffer> {
  return new Map([...entries].filter(([entry]) => !isSystemFile(entry)));
}
