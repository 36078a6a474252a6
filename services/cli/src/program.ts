import { DemiurgeError } from '@demiurge/contracts';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { demoCommand } from './commands/demo.js';
import { eventsCommand } from './commands/events.js';
import { rebuildCommand } from './commands/rebuild.js';
import { resolveHome } from './home.js';
import { type CommandIo, processIo } from './io.js';

const VERSION = '0.1.0';

function positiveInt(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
    return n;
  };
}

const homeOption = () => new Option('--home <dir>', 'the Demiurge home (default: $DEMIURGE_HOME, else ~/.demiurge)');

function buildProgram(io: CommandIo): Command {
  const program = new Command('demiurge')
    .description('A durable, event-sourced runtime for AI-agent hosts.')
    .version(VERSION)
    .showHelpAfterError('(run "demiurge --help" for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();

  program
    .command('demo')
    .description('create the embedded store, append a sample session, rebuild the projections and print them')
    .addOption(homeOption())
    .option('--json', 'print one JSON object instead of text', false)
    .action(async (o: { home?: string; json: boolean }) => demoCommand(resolveHome(o.home), o, io));

  program
    .command('events')
    .description('print the event log from a position (NDJSON with --json)')
    .addOption(homeOption())
    .option('--json', 'one JSON event per line', false)
    .option('--from <position>', 'first position to print', positiveInt('--from', 1), 1)
    .option('--limit <n>', 'print at most n events', positiveInt('--limit', 0))
    .option('--type <type...>', 'only these event types')
    .action(async (o: { home?: string; json: boolean; from: number; limit?: number; type?: string[] }) =>
      eventsCommand(resolveHome(o.home), { json: o.json, from: o.from, limit: o.limit, types: o.type }, io),
    );

  program
    .command('rebuild')
    .description('reset every projection and replay the log into it')
    .addOption(homeOption())
    .option('--json', 'print one JSON report', false)
    .action(async (o: { home?: string; json: boolean }) => rebuildCommand(resolveHome(o.home), o, io));

  return program;
}

/**
 * Runs the CLI and returns its exit code: 0 done, 1 the runtime refused (a clear message, no stack),
 * 2 a usage error.
 */
export async function runCli(argv: readonly string[], io: CommandIo = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : 2;
    }
    if (err instanceof DemiurgeError) {
      io.err(`demiurge: ${err.message}`);
      return 1;
    }
    io.err(`demiurge: unexpected error: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.DEMIURGE_DEBUG && err instanceof Error && err.stack) io.err(err.stack);
    return 1;
  }
}
