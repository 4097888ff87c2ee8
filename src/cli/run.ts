/** Parses the `steward` command line and runs a subcommand; returns the exit code. */
import { parseArgs } from 'node:util';

import { CliError } from './api.js';
import { type AnyCommand, type Invocation, type Io } from './command.js';
import { commands } from './commands.js';
import { connect } from './connection.js';

class UsageError extends Error {}

const HELP_OPTION = { help: 'show this help' };

function mainUsage(): string {
  const width = Math.max(...Object.entries(commands).map(([name, c]) => commandLine(name, c).length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${commandLine(name, c).padEnd(width)}   ${c.summary}`);
  return [
    'Usage: steward <command> [options]',
    '',
    'Manages the QGIS Server instances registered with a Steward server.',
    '',
    'Commands:',
    ...lines,
    '',
    'Environment:',
    '  STEWARD_SERVER_URL   URL of the Steward API, e.g. http://localhost:5000',
    '                       (default: the server of the last steward login)',
    '  STEWARD_API_TOKEN    sent as a bearer token (default: the token steward login kept',
    '                       for the server)',
    '',
    "Run 'steward <command> --help' for the options of a command.",
    '',
  ].join('\n');
}

function commandLine(name: string, command: AnyCommand): string {
  return [name, ...command.arguments].join(' ');
}

/** `--json`, `--schema <value>`, and `-h, --help` for the one option with a short form. */
function optionLabel(option: string): string {
  return option === 'help' ? '-h, --help' : `--${option}`;
}

function commandUsage(name: string, command: AnyCommand): string {
  const valued = Object.entries(command.valueOptions ?? {}).map(([option, text]) => [`${option} <value>`, text]);
  const options = [...valued, ...Object.entries({ ...command.options, ...HELP_OPTION })];
  const width = Math.max(...options.map(([option = '']) => optionLabel(option).length));
  const flags = options.map(([option = '']) => `[${optionLabel(option)}]`).join(' ');
  return [
    `Usage: steward ${commandLine(name, command)} ${flags}`,
    '',
    `${command.summary}.`,
    '',
    'Options:',
    ...options.map(([option = '', text]) => `  ${optionLabel(option).padEnd(width)}   ${text}`),
    '',
  ].join('\n');
}

/** Node's message for an option it refuses, without its advice on positionals: `Unknown option '--x'`. */
function refusal(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  const message = (error as Error).message;
  return message.split(/\. (?=[A-Z])/)[0]?.replace(/\.$/, '');
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string };

/** Every option of the command, `--help` with its `-h`, for parseArgs. */
function parseOptions(command: AnyCommand): Record<string, OptionSpec> {
  const spec = (type: OptionSpec['type']) => (option: string) => [option, { type }] as const;
  const entries = [
    ...Object.keys(command.options).map(spec('boolean')),
    ...Object.keys(command.valueOptions ?? {}).map(spec('string')),
  ];
  return { ...Object.fromEntries(entries), help: { type: 'boolean', short: 'h' } };
}

interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

function parseStrictly(name: string, command: AnyCommand, args: string[]): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: parseOptions(command),
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals };
  } catch (error) {
    const message = refusal(error);
    if (message === undefined) throw error;
    throw new UsageError(`steward ${name}: ${message}`);
  }
}

function parse(name: string, command: AnyCommand, args: string[]): Invocation {
  const valued = command.valueOptions ?? {};
  const { values, positionals } = parseStrictly(name, command, args);
  const flags = Object.fromEntries(Object.entries(values).map(([option, value]) => [option, value === true]));
  const given = Object.fromEntries(
    Object.keys(valued).map((option) => [option, typeof values[option] === 'string' ? values[option] : undefined]),
  );
  const required = command.arguments.filter((argument) => !argument.startsWith('[')).length;
  if (!flags['help'] && (positionals.length < required || positionals.length > command.arguments.length)) {
    const expected = command.arguments.length === 0 ? 'no arguments' : command.arguments.join(' ');
    throw new UsageError(`steward ${name}: expected ${expected}`);
  }
  return { ids: positionals, flags, values: given };
}

export async function run(argv: string[], io: Io): Promise<number> {
  const [name, ...args] = argv;
  try {
    if (name === '--help' || name === '-h') return (io.out(mainUsage()), 0);
    const command = name === undefined ? undefined : commands[name];
    if (!name || !command)
      throw new UsageError(name ? `steward: unknown command ${name}` : 'steward: no command given');
    const invocation = parse(name, command, args);
    if (invocation.flags['help']) return (io.out(commandUsage(name, command)), 0);
    const code = 'ownServer' in command ? command.run(invocation, io) : command.run(connect(io.env), invocation, io);
    return (await code) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\nRun 'steward ${name && commands[name] ? `${name} ` : ''}--help' for usage.\n`);
      return 2;
    }
    if (error instanceof CliError) {
      io.err(`steward: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
