/** What a `steward` subcommand is, and what it is given to run. */
import { CliError, type StewardApi } from './api.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal, where `--watch` redraws in place. */
  isTTY: boolean;
  /** Ends `--watch`. */
  signal: AbortSignal;
  /** A line of stdin, hidden after `prompt` on a terminal (a token to log in with). */
  readSecret(prompt: string): Promise<string>;
}

export interface Invocation {
  ids: string[];
  flags: Record<string, boolean>;
  /** The values of the command's `valueOptions`. */
  values: Record<string, string | undefined>;
}

interface CommandHelp {
  summary: string;
  arguments: string[];
  options: Record<string, string>;
  /** Options that take a value (`--levels 0-8`), with their help. */
  valueOptions?: Record<string, string>;
}

/** A command that asks the server of the environment or of the last login (connection.ts). */
export interface Command extends CommandHelp {
  /** Resolves to the exit code when it is not 0. */
  run(api: StewardApi, invocation: Invocation, io: Io): Promise<void | number>;
}

/** A command that finds its server itself: `steward login URL`, `steward logout`. */
export interface OwnServerCommand extends CommandHelp {
  ownServer: true;
  run(invocation: Invocation, io: Io): Promise<void | number>;
}

export type AnyCommand = Command | OwnServerCommand;

export const JSON_OPTION = { json: 'print JSON instead of text' };

/** The value option of the commands that name a project. */
export const SCHEMA_OPTION = {
  schema: "the project's schema, when projects are stored in PostgreSQL (default: public)",
};

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The value of a count option (`--limit`): a whole number from 1 to `max`, `fallback` when not given. */
export function countOf(option: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  const count = Number(text);
  if (!/^[0-9]+$/.test(text) || count < 1 || count > max)
    throw new CliError(`--${option} must be from 1 to ${max}, not "${text}"`);
  return count;
}
