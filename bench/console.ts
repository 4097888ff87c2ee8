/**
 * The web console's weight and first page: the gzipped JavaScript of a fresh build against its
 * 400 KB budget (the run fails above it), and how long Chromium takes on loopback from navigating
 * to `/` until the projects page is usable.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { launchBrowser } from '../test/support/browser.js';
import { startStack } from '../test/support/stack.js';
import { ms, summarise, table } from './stats.js';

export const CONSOLE_JS_BUDGET_KB = 400;
const RUNS = 10;
const repo = join(import.meta.dirname, '..');

function kb(bytes: number): string {
  return (bytes / 1024).toFixed(1);
}

function weighAssets(): { rows: string[][]; gzipped: number } {
  execFileSync('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], {
    cwd: repo,
    stdio: 'inherit',
  });
  const folder = join(repo, 'web', 'dist', 'assets');
  let gzipped = 0;
  const rows = readdirSync(folder)
    .filter((file) => file.endsWith('.js'))
    .map((file) => {
      const bytes = readFileSync(join(folder, file));
      const packed = gzipSync(bytes, { level: 9 }).length;
      gzipped += packed;
      return [file, kb(bytes.length), kb(packed)];
    })
    .sort((a, b) => Number(b[2]) - Number(a[2]));
  return { rows, gzipped };
}

async function firstPage(): Promise<string> {
  const [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  try {
    const samples: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ baseURL: stack.api.url });
      const page = await context.newPage();
      const start = performance.now();
      await page.goto('/');
      await page.getByRole('heading', { name: 'No project yet' }).waitFor();
      samples.push(performance.now() - start);
      await context.close();
    }
    const timing = summarise(samples);
    return `First page (navigate to \`/\` until the empty projects page shows, each in a fresh browser context, ${RUNS} runs): median ${ms(timing.median)} ms, p95 ${ms(timing.p95)} ms.`;
  } finally {
    await browser.close();
    await stack.stop();
  }
}

export async function runConsoleBench(): Promise<string> {
  const { rows, gzipped } = weighAssets();
  const verdict = `All console JavaScript: ${kb(gzipped)} KB gzipped, budget ${CONSOLE_JS_BUDGET_KB} KB.`;
  if (gzipped > CONSOLE_JS_BUDGET_KB * 1024) throw new Error(`${verdict} Over budget.`);
  return ['## Web console', table(['chunk', 'KB', 'KB gzipped'], rows), verdict, await firstPage()].join('\n\n');
}
