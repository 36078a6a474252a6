import { type Command, Option } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { jsonOption, wholeNumber } from '../options.js';
import type { SweepCliOptions } from './sweep.js';

/** The scripted scenarios of `demiurge sweep` (`SWEEP_SCENARIOS` of sweep/scenarios.ts, named here so `--help` loads none). */
export const SWEEP_SCENARIO_NAMES = [
  'delivery',
  'cancel',
  'schedule-fire',
  'turn-tools-delegation',
  'compaction',
] as const;

/** `demiurge sweep` (the implementation, and with it the host driver, loads on use: `sweep.ts`). */
export function registerSweep(program: Command, ctx: CommandContext): void {
  program
    .command('sweep')
    .description(
      'the crash-point sweep: run scripted scenarios on the real host (demiurge serve) with your Agent Core, SIGKILL it right before and right after each store commit, restart it on the same home and check that it settles with nothing lost or done twice (verify, acknowledged submits, deliveries, tool effects); prints per scenario the commits and the crash points planned and covered, and every problem with its crash point (exit 1 on a problem)',
    )
    .option('--core <dir>', 'the Agent Core to sweep (default: the bundled core); each run uses a copy')
    .addOption(
      new Option('--scenario <name...>', 'only these scenarios (default: all)').choices([...SWEEP_SCENARIO_NAMES]),
    )
    .option(
      '--sample <k>',
      'at most k crash points per scenario, spread evenly over its commits (default: every point)',
      wholeNumber('--sample', 1),
    )
    .option(
      '--at <point...>',
      'only these crash points, as a problem names them: <n>:<before|after> (e.g. 3:before), to rerun a failure',
    )
    .option('--keep', 'keep the directory (core copy, home, commit trace) of every run that found a problem')
    // For testing the tester: a host that answers a submit before committing it (not in --help).
    .addOption(new Option('--inject-bug <bug>').choices(['ack-before-commit']).hideHelp())
    .addOption(jsonOption('print one JSON document: each scenario with its counts and problems'))
    .action(action(ctx, async (o: SweepCliOptions) => (await import('./sweep.js')).sweepCommand(o, ctx.io)));
}
