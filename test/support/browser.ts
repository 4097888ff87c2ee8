/**
 * Chromium driven by Playwright for the web console's tests: Debian's browser, headless, with
 * nothing reaching beyond loopback. Pages are checked with axe-core and screenshotted into
 * test/screenshots/ (see the README).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, chromium, type Locator, type Page, type Request } from 'playwright-core';

import { decodePng, type Image } from './png.js';
import { waitFor } from './wait.js';

export const SCREENSHOTS_DIR = join(import.meta.dirname, '..', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A new page in a context of its own (fresh storage); its console errors are collected. */
export async function openPage(browser: Browser, baseURL: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

/**
 * What `read` answers in the page once it answers `expected`, or after 5 s what it answers then.
 * The console moves the focus in effects after a render, so a test reads it once it has settled.
 */
export async function settled<T>(page: Page, read: () => T, expected: T): Promise<T> {
  const deadline = Date.now() + 5000;
  let answer = await page.evaluate(read);
  while (answer !== expected && Date.now() < deadline) {
    await new Promise((wake) => setTimeout(wake, 50));
    answer = await page.evaluate(read);
  }
  return answer;
}

/**
 * Resolves once the effects of the renders so far have run: Preact runs them in a task it queues
 * at the next animation frame (or after 100 ms), before this task queued then. A map zoomed in an
 * effect has moved once this resolves; a key pressed before may still meet the old view.
 */
export async function effectsRun(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
}

/** The URLs the page asks for whose path is `path`, from now on. */
export function asked(page: Page, path: string): URL[] {
  const urls: URL[] = [];
  page.on('request', (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname === path) urls.push(url);
  });
  return urls;
}

/** Fails on any serious or critical accessibility violation axe-core finds on the page. */
export async function checkAccessibility(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const violations = results.violations.filter(({ impact }) => impact === 'serious' || impact === 'critical');
  const described = violations.map(
    ({ id, impact, help, nodes }) =>
      `${impact} ${id}: ${help} (${nodes.map((node) => node.target.join(' ')).join('; ')})`,
  );
  assert.deepEqual(described, [], `accessibility of ${what}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/** The map as the person sees it: a screenshot of its element, decoded. */
async function mapImage(map: Locator): Promise<Image> {
  return decodePng(await map.screenshot());
}

/** Waits until the map's centre pixel passes `check` (QGIS Server draws, then OpenLayers renders). */
export async function centreWhen(map: Locator, what: string, check: (pixel: number[]) => boolean): Promise<number[]> {
  let pixel: number[] = [];
  return waitFor(
    () => `the map's centre to become ${what} (last ${pixel.join(',')})`,
    async () => {
      const image = await mapImage(map);
      pixel = image.pixel(Math.floor(image.width / 2), Math.floor(image.height / 2));
      return check(pixel) && pixel;
    },
    20_000,
    200,
  );
}
