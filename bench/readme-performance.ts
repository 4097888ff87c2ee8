/**
 * The README's performance figures, regenerated from the bench reports of bench/results/: for each
 * suite, its section of the newest report that ran it, between the README's two markers. `npm run
 * bench` calls it after writing its report; `npm run bench:readme` runs it alone.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { format, resolveConfig } from 'prettier';

export const README = join(import.meta.dirname, '..', 'README.md');
export const RESULTS = join(import.meta.dirname, 'results');
const START = '<!-- performance:start -->';
const END = '<!-- performance:end -->';
/** Put by bench/run.ts before each suite's part of a report. */
const SUITE_MARK = /^<!-- suite: (\w+) -->$/;
/** The suites in the order bench/run.ts runs them. */
const SUITE_ORDER = ['api', 'processing', 'jobs', 'plugin', 'scale', 'pool', 'console'];

/** The line that opens a suite's part of a report. */
export function suiteMark(key: string): string {
  return `<!-- suite: ${key} -->`;
}

interface Report {
  file: string;
  date: string;
  machine: string[];
  /** Each suite's text, by its key. */
  suites: Map<string, string>;
}

/**
 * A report's suites: the parts after each suite mark; a report written before the marks existed
 * counts as one suite when its file name says which (`bench-<date>-scale.md`).
 */
function parseReport(file: string, text: string): Report {
  const lines = text.split('\n');
  const machine = lines.slice(0, 8).filter((line) => line.startsWith('- '));
  const date = /^- date: (\S+)/m.exec(text)?.[1] ?? '';
  const suites = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of lines) {
    const mark = SUITE_MARK.exec(line);
    if (mark) suites.set(mark[1] ?? '', (current = []));
    else current?.push(line);
  }
  const single = /^bench-\d{4}-\d{2}-\d{2}-(\w+)\.md$/.exec(file)?.[1];
  if (suites.size === 0 && single !== undefined) {
    const body = lines.slice(lines.findIndex((line, i) => i > 0 && line.startsWith('## ')));
    suites.set(single, body);
  }
  const texts = new Map([...suites].map(([key, body]) => [key, body.join('\n').trim()]));
  return { file, date, machine, suites: texts };
}

function reports(directory: string): Report[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory)
    .filter((file) => /^bench-.*\.md$/.test(file))
    .map((file) => parseReport(file, readFileSync(join(directory, file), 'utf8')))
    .sort((a, b) => a.date.localeCompare(b.date));
}

/** The generated part of the README: each suite from the newest report that ran it. */
export function performanceSection(directory = RESULTS, order: readonly string[] = SUITE_ORDER): string {
  const newest = new Map<string, Report>();
  for (const report of reports(directory)) for (const key of report.suites.keys()) newest.set(key, report);
  const keys = [...newest.keys()].sort((a, b) => rank(order, a) - rank(order, b));
  const parts = keys.map((key) => {
    const report = newest.get(key) as Report;
    // The report's own headings go two levels down, under the README's "## Performance".
    const text = (report.suites.get(key) ?? '').replace(/^## /gm, '#### ');
    return [`### ${key} (\`bench/results/${report.file}\`)`, '', ...report.machine, '', text].join('\n');
  });
  return [
    START,
    '<!-- Generated from bench/results/ by `npm run bench:readme` (and `npm run bench`); edit bench/, not this. -->',
    '',
    parts.length > 0 ? parts.join('\n\n') : 'No bench report yet: run `npm run bench`.',
    END,
  ].join('\n');
}

function rank(order: readonly string[], key: string): number {
  const index = order.indexOf(key);
  return index < 0 ? order.length : index;
}

/** Writes the section into the README between its markers, formatted as `npm run format` would. */
export async function updateReadme(readme = README, directory = RESULTS, order = SUITE_ORDER): Promise<void> {
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${readme} has no ${START} ... ${END} markers`);
  const updated = text.slice(0, start) + performanceSection(directory, order) + text.slice(end + END.length);
  const options = await resolveConfig(readme);
  writeFileSync(readme, await format(updated, { ...options, filepath: readme }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await updateReadme();
