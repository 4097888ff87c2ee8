import { BadRequest } from '../errors.js';

/**
 * File names may have 255 bytes, and Steward writes files whose names are longer than the name
 * they carry: the atomic write of a cache configuration, `.<name>.yaml.<uuid>.tmp`, adds 47.
 */
const MAX_NAME_BYTES = 200;

/**
 * Characters XML 1.0 cannot hold, not even as references: C0 controls other than tab and line
 * breaks, U+FFFE, U+FFFF, and half of a surrogate pair. QGIS cannot load a project holding one.
 */
const NOT_XML =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const NAME_RULES: Array<[problem: string, breaks: (name: string) => boolean]> = [
  ['is empty', (name) => name.trim() === ''],
  [`is longer than ${MAX_NAME_BYTES} bytes`, (name) => Buffer.byteLength(name) > MAX_NAME_BYTES],
  ['contains a slash', (name) => /[/\\]/.test(name)],
  ['contains ".."', (name) => name.includes('..')],
  // C1 controls too: QGIS reads a layer named U+0085 alone as unnamed, since Qt counts it as a space.
  ['contains a control character', (name) => /[\u0000-\u001f\u007f-\u009f]/.test(name)],
  ['starts with a dot', (name) => name.startsWith('.')],
  ['contains a character XML cannot hold', (name) => NOT_XML.test(name)],
  // QGIS Server 3.22 (Qt 5) drops these from the layer and style names it reads, so a layer named
  // with one could not be requested by the name Steward reports.
  [
    'contains a character beyond U+FFFF (such as an emoji), which QGIS Server drops',
    (name) => /[\ud800-\udfff]/.test(name),
  ],
];

/**
 * Checks a name that becomes part of a path or a file name (projects, layers, styles, schemas):
 * no separators, no `..`, no control characters, no leading dot, at most 200 bytes, and only
 * characters that QGIS keeps as written.
 */
export function checkName(kind: string, name: string): string {
  const problem = NAME_RULES.find(([, breaks]) => breaks(name))?.[0];
  if (problem) throw new BadRequest(`${kind} name "${name.slice(0, 80)}" ${problem}`);
  return name;
}

/** Checks free text that Steward writes into a project, such as its author. */
export function checkText(kind: string, text: string): string {
  if (NOT_XML.test(text))
    throw new BadRequest(
      `${kind} contains a character XML cannot hold (a control character, U+FFFE, U+FFFF or half of a surrogate pair)`,
    );
  return text;
}
