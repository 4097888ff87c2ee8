/**
 * node:test's suites, tests and hooks with a timeout by default, so a hung engine fails its test
 * instead of hanging the run. Every test file imports them from here (lint forbids `node:test`
 * elsewhere); a test that needs longer says so with `{ timeout }`, which replaces the default.
 */
import * as node from 'node:test';

/** A test: one case, usually a request or two to an engine already started by a hook. */
export const TEST_TIMEOUT_MS = 120_000;
/** A hook: starting or stopping engines (QGIS Server, MapProxy, a PostgreSQL database). */
export const HOOK_TIMEOUT_MS = 300_000;
/** A suite: its hooks and all its tests together. */
export const SUITE_TIMEOUT_MS = 1_800_000;

type SuiteFn = (context: node.SuiteContext) => void | Promise<void>;
type TestFn = (context: node.TestContext) => void | Promise<void>;
type HookFn = (context: node.TestContext | node.SuiteContext) => unknown;
type Options = Omit<node.TestOptions, 'skip' | 'todo' | 'only'>;

/** The trailing arguments of a suite or test: a body, or options then a body. */
type Rest<Fn> = [Fn] | [Options, Fn];

function split<Fn>(rest: Rest<Fn>, timeout: number): [node.TestOptions, Fn] {
  return rest.length === 1 ? [{ timeout }, rest[0]] : [{ timeout, ...rest[0] }, rest[1]];
}

export function describe(name: string, ...rest: Rest<SuiteFn>): void {
  void node.describe(name, ...split(rest, SUITE_TIMEOUT_MS));
}

export function it(name: string, ...rest: Rest<TestFn>): void {
  void node.it(name, ...split(rest, TEST_TIMEOUT_MS));
}

export const test = it;

const hook =
  (register: (fn: HookFn, options: node.HookOptions) => void) =>
  (fn: HookFn, options: node.HookOptions = {}): void =>
    register(fn, { timeout: HOOK_TIMEOUT_MS, ...options });

export const before = hook(node.before);
export const after = hook(node.after);
export const beforeEach = hook(node.beforeEach);
export const afterEach = hook(node.afterEach);
