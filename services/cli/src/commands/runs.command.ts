import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, type JsonOptions, jsonOption, nonEmpty } from '../options.js';
import type { RunReasonOptions, RunsListOptions } from './runs.js';

const load = () => import('./runs.js');

/** `demiurge runs list|show|cancel|pause|resume` (the implementation loads on use: `runs.ts`). */
export function registerRuns(program: Command, ctx: CommandContext): void {
  const runs = program.command('runs').description('list and show runs; cancel, pause or resume one');
  runs
    .command('list')
    .description('runs, oldest first (all of them, one session, or only the live ones)')
    .option('--session <id>', 'only the runs of this session')
    .option('--live', 'only runs not yet completed, failed, cancelled or archived', false)
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (o: RunsListOptions) => (await load()).runsList(o, ctx.io)));
  runs
    .command('show')
    .description('one run, its turns and their tool calls by step, and its approvals')
    .argument('<id>', 'the run id (run_...)')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: JsonOptions) => (await load()).runsShow(id, o, ctx.io)));
  runs
    .command('cancel')
    .description('ask a live run to stop: it becomes cancelling, and its owner settles it and its child tasks')
    .argument('<id>', 'the run id')
    .option('--reason <text>', 'why (recorded in the log)', nonEmpty('--reason'))
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: RunReasonOptions) => (await load()).runsCancel(id, o, ctx.io)));
  runs
    .command('pause')
    .description('pause a live run (resume it later with "runs resume")')
    .argument('<id>', 'the run id')
    .option('--reason <text>', 'why (recorded in the log)', nonEmpty('--reason'))
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: RunReasonOptions) => (await load()).runsPause(id, o, ctx.io)));
  runs
    .command('resume')
    .description('resume a paused, waiting or resumable blocked run')
    .argument('<id>', 'the run id')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: JsonOptions) => (await load()).runsResume(id, o, ctx.io)));
}
