import { type Command, Option } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { jsonOption, wholeNumber } from '../options.js';
import type { SimulateCliOptions } from './simulate.js';

/** `demiurge simulate` (the implementation, and with it the test kit, loads on use: `simulate.ts`). */
export function registerSimulate(program: Command, ctx: CommandContext): void {
  program
    .command('simulate')
    .description(
      'run seeded scenarios of the whole runtime (turns, tools, detached tasks, deliveries, operator actions, faults, crashes and takeovers) on a virtual clock and a fresh SQLite file (or, with --store-url, a fresh PostgreSQL schema) each, checking every stream, the seed invariants, the projections and every effect after each step; a failure prints its seed and the shortest trace that reproduces it (exit 1)',
    )
    .option('--core <dir>', 'the Agent Core to simulate (default: the bundled core)')
    .option('--seeds <n>', 'how many scenarios', wholeNumber('--seeds', 1), 100)
    .option(
      '--seed <s>',
      'the first seed (a failure names its seed: rerun it with --seed S --seeds 1)',
      wholeNumber('--seed', 0),
      1,
    )
    .option('--max-actions <n>', 'the most actions a scenario has', wholeNumber('--max-actions', 1), 8)
    .option(
      '--store-url <url>',
      'run every scenario on PostgreSQL: a fresh schema each in this database (its user needs CREATE on it), dropped after the run; DEMIURGE_STORE_URL is not read',
    )
    // For testing the tester: a deliberately broken delivery sink, to see a failure reported (not in --help).
    .addOption(new Option('--inject-bug <bug>').choices(['ack-before-send', 'double-send']).hideHelp())
    .addOption(jsonOption('print one JSON document: each run and the batch, with their log hashes'))
    .action(action(ctx, async (o: SimulateCliOptions) => (await import('./simulate.js')).simulateCommand(o, ctx.io)));
}
