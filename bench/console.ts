/**
 * The web console's weight and first page: the gzipped JavaScript of a fresh build against its
 * 400 KB budget (the run fails above it), and how long Chromium takes on loopback from navigating
 * to `/` until the projects page is usable, and to a project's page until its map is drawn, with
 * the CPU time the browser and the servers spent and the machine's load.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { type Browser, type Page } from 'playwright-core';

import { launchBrowser } from '../test/support/browser.js';
import { createTownWithDistricts } from '../test/support/demo-town.js';
import { startStack } from '../test/support/stack.js';
import { cpuSince, descendantsCpu } from './cpu.js';
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

/** Times `open` in a fresh browser context `RUNS` times: wall time, and the CPU of the browser and the servers. */
async function timed(browser: Browser, baseURL: string, open: (page: Page) => Promise<void>): Promise<string> {
  const samples: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const before = descendantsCpu();
    const start = performance.now();
    await open(page);
    samples.push(performance.now() - start);
    cpu.push(cpuSince(before, descendantsCpu()) * 1000);
    await context.close();
  }
  const wall = summarise(samples);
  return `median ${ms(wall.median)} ms, p95 ${ms(wall.p95)} ms; CPU (browser, API and QGIS Server) median ${ms(summarise(cpu).median)} ms`;
}

/** The projects page usable: its table of projects (or its empty state) shown. */
async function projectsPage(page: Page): Promise<void> {
  await page.goto('/');
  await page.getByRole('table', { name: /^Projects/ }).waitFor();
}

/** A project's map on screen: QGIS Server's first image drawn on the map's canvas. */
async function projectMap(page: Page): Promise<void> {
  await page.goto('/projects/town');
  await page.waitForFunction(
    () => {
      const canvas = document.querySelector<HTMLCanvasElement>('[data-testid="project-map"] canvas');
      const context = canvas?.getContext('2d', { willReadFrequently: true });
      if (!canvas || !context || canvas.width === 0) return false;
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      return data.some((value, index) => index % 4 === 3 && value > 0);
    },
    undefined,
    { polling: 'raf' },
  );
}

async function pageTimes(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'steward-bench-console-'));
  const demo = join(dataDir, 'demo');
  execFileSync('/usr/bin/python3', [join(repo, 'scripts', 'demo-data.py'), demo]);
  const [stack, browser] = await Promise.all([startStack({ dataRoots: [demo] }), launchBrowser()]);
  try {
    await createTownWithDistricts(stack, demo);
    const load = loadavg()[0] ?? Number.NaN;
    const first = await timed(browser, stack.api.url, projectsPage);
    const map = await timed(browser, stack.api.url, projectMap);
    return [
      `Each in a fresh browser context, ${RUNS} runs, at 1280 x 860, the machine's 1-minute load ${load.toFixed(2)} on ${availableParallelism()} cores at the start:`,
      `- first page (navigate to \`/\` until the projects table shows): ${first}`,
      `- a project's map (navigate to \`/projects/town\` until QGIS Server's first image is on the map): ${map}`,
      `- load at the end: ${(loadavg()[0] ?? Number.NaN).toFixed(2)}`,
    ].join('\n');
  } finally {
    await browser.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runConsoleBench(): Promise<string> {
  const { rows, gzipped } = weighAssets();
  const verdict = `All console JavaScript: ${kb(gzipped)} KB gzipped, budget ${CONSOLE_JS_BUDGET_KB} KB.`;
  if (gzipped > CONSOLE_JS_BUDGET_KB * 1024) throw new Error(`${verdict} Over budget.`);
  return ['## Web console', table(['chunk', 'KB', 'KB gzipped'], rows), verdict, await pageTimes()].join('\n\n');
}
