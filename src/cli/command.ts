/** What a `steward` subcommand is, and what it is given to run. */
import { type StewardApi } from './api.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal, where `--watch` redraws in place. */
  isTTY: boolean;
  /** Ends `--watch`. */
  signal: AbortSignal;
}

export interface Invocation {
  ids: string[];
  flags: Record<string, boolean>;
  /** The values of the command's `valueOptions`. */
  values: Record<string, string | undefined>;
}

export interface Command {
  summary: string;
  arguments: string[];
  options: Record<string, string>;
  /** Options that take a value (`--levels 0-8`), with their help. */
  valueOptions?: Record<string, string>;
  /** Resolves to the exit code when it is not 0. */
  run(api: StewardApi, invocation: Invocation, io: Io): Promise<void | number>;
}

export const JSON_OPTION = { json: 'print JSON instead of text' };

/** The value option of the commands that name a project. */
export const SCHEMA_OPTION = {
  schema: "the project's schema, when projects are stored in PostgreSQL (default: public)",
};

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
