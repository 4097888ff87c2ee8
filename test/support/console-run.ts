/**
 * What a console test runs against: the demo data in a folder of its own, a server (a stack, or a
 * stack with the tile cache) started over it, and Chromium with a fresh page on the server's API.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type Browser, type Page } from 'playwright-core';

import { launchBrowser, openPage } from './browser.js';

export interface ConsoleRun<Server> {
  server: Server;
  browser: Browser;
  page: Page;
  /** Errors the page threw: a test ends by checking there are none. */
  errors: string[];
  /** The run's own folder, removed by `close`. */
  dataDir: string;
  /** The demo data (`scripts/demo-data.py`), inside `dataDir`. */
  demo: string;
  close(): Promise<void>;
}

const demoScript = resolve(import.meta.dirname, '..', '..', 'scripts', 'demo-data.py');

/** Starts the server over fresh demo data and the browser side by side, and opens a page on the API. */
export async function startConsoleRun<Server extends { stop(): Promise<void> }>(
  name: string,
  start: (demo: string) => Promise<Server>,
  apiUrl: (server: Server) => string,
): Promise<ConsoleRun<Server>> {
  const dataDir = mkdtempSync(join(tmpdir(), `steward-${name}-`));
  const demo = join(dataDir, 'demo');
  execFileSync('/usr/bin/python3', [demoScript, demo]);
  const [server, browser] = await Promise.all([start(demo), launchBrowser()]);
  const { page, errors } = await openPage(browser, apiUrl(server));
  const close = async (): Promise<void> => {
    await browser.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { server, browser, page, errors, dataDir, demo, close };
}
