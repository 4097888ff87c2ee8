import { BadRequest } from '../errors.js';

const MAX_NAME_BYTES = 255;

/**
 * Checks a name that becomes part of a path or a file name (projects, layers, styles, schemas):
 * no separators, no `..`, no control characters, no leading dot, at most 255 bytes.
 */
export function checkName(kind: string, name: string): string {
  const problem =
    name.trim() === ''
      ? 'is empty'
      : Buffer.byteLength(name) > MAX_NAME_BYTES
        ? `is longer than ${MAX_NAME_BYTES} bytes`
        : /[/\\]/.test(name)
          ? 'contains a slash'
          : name.includes('..')
            ? 'contains ".."'
            : /[\u0000-\u001f\u007f]/.test(name)
              ? 'contains a control character'
              : name.startsWith('.')
                ? 'starts with a dot'
                : undefined;
  if (problem) throw new BadRequest(`${kind} name "${name.slice(0, 80)}" ${problem}`);
  return name;
}
