import { type Command, Option } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, isoTime, type JsonOptions, jsonOption, nonEmpty } from '../options.js';
import type { WorkListOptions, WorkResolveOptions } from './work.js';

const load = () => import('./work.js');

/** The work item statuses (the work machine's states but `none`; a test keeps them in step). */
export const WORK_STATUSES = [
  'queued',
  'claimed',
  'running',
  'sending',
  'succeeded',
  'failed',
  'retry_scheduled',
  'cancelled',
  'unknown',
  'acknowledged',
  'corrupt',
] as const;

/** `demiurge work list|show|resolve` (the implementation loads on use: `work.ts`). */
export function registerWork(program: Command, ctx: CommandContext): void {
  const work = program.command('work').description('durable work items: list, show, resolve an unknown one');
  work
    .command('list')
    .description('work items, oldest first')
    .option('--kind <kind>', 'only this kind (delivery.send, schedule.fire, task.completion)')
    .addOption(new Option('--status <status>', 'only this status').choices(WORK_STATUSES))
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (o: WorkListOptions) => (await load()).workList(o, ctx.io)));
  work
    .command('show')
    .description('one work item')
    .argument('<id>', 'the work id (wrk_...)')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: JsonOptions) => (await load()).workShow(id, o, ctx.io)));
  work
    .command('resolve')
    .description('settle a work item whose outcome is unknown (an interrupted send)')
    .argument('<id>', 'the work id')
    .addOption(
      new Option('--decision <decision>', 'sent: it happened; failed: it did not; retry: send it again')
        .choices(['sent', 'failed', 'retry'])
        .makeOptionMandatory(),
    )
    .option('--note <text>', 'why (recorded in the log)', nonEmpty('--note'))
    .option('--retry-at <time>', 'with --decision retry: not before this ISO time', isoTime('--retry-at'))
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: WorkResolveOptions) => (await load()).workResolve(id, o, ctx.io)));
}
