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

function commandUsage(name: string, command: AnyCommand): string {
  const valued = Object.entries(command.valueOptions ?? {}).map(([option, text]) => [`${option} <value>`, text]);
  const options = [...valued, ...Object.entries({ ...command.options, ...HELP_OPTION })];
  const width = Math.max(...options.map(([option = '']) => option.length)) + 2;
  const flags = options.map(([option]) => `[--${option}]`).join(' ');
  return [
    `Usage: steward ${commandLine(name, command)} ${flags}`,
    '',
    `${command.summary}.`,
    '',
    'Options:',
    ...options.map(([option, text]) => `  ${`--${option}`.padEnd(width)}   ${text}`),
    '',
  ].join('\n');
}

function parse(name: string, command: AnyCommand, args: string[]): Invocation {
  const valued = command.valueOptions ?? {};
  const known = { ...command.options, ...HELP_OPTION, ...valued };
  const options = Object.fromEntries(
    Object.keys(known).map((option) => [
      option,
      { type: option in valued ? ('string' as const) : ('boolean' as const) },
    ]),
  );
  const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: false });
  const unknown = Object.keys(values).find((option) => !(option in known));
  if (unknown) throw new UsageError(`steward ${name}: unknown option --${unknown}`);
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
