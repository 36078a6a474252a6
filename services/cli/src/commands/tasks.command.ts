import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, type JsonOptions, jsonOption, nonEmpty } from '../options.js';
import type { TaskAckOptions, TaskReasonOptions, TasksListOptions } from './tasks.js';

const load = () => import('./tasks.js');

/** `demiurge tasks list|show|cancel|delete|archive|ack` (the implementation loads on use: `tasks.ts`). */
export function registerTasks(program: Command, ctx: CommandContext): void {
  const tasks = program
    .command('tasks')
    .description('the detached task ledger: list, show, cancel, delete, archive, ack');
  tasks
    .command('list')
    .description('tasks, oldest first (deleted ones only with --all)')
    .option('--session <id>', 'only the tasks of this session')
    .option('--all', 'include deleted (hidden) tasks', false)
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (o: TasksListOptions) => (await load()).tasksList(o, ctx.io)));
  tasks
    .command('show')
    .description('one task (deleted ones too: they are kept for audit)')
    .argument('<id>', 'the task id (tsk_...)')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: JsonOptions) => (await load()).tasksShow(id, o, ctx.io)));
  tasks
    .command('cancel')
    .description('cancel a task (before or after it started); it leaves the active lanes')
    .argument('<id>', 'the task id')
    .option('--reason <text>', 'why (recorded in the log)', nonEmpty('--reason'))
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: TaskReasonOptions) => (await load()).tasksCancel(id, o, ctx.io)));
  tasks
    .command('delete')
    .description('delete a cancelled task: hidden from every list, kept for audit')
    .argument('<id>', 'the task id')
    .option('--reason <text>', 'why (recorded in the log)', nonEmpty('--reason'))
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: TaskReasonOptions) => (await load()).tasksDelete(id, o, ctx.io)));
  tasks
    .command('archive')
    .description('archive a completed, failed, cancelled or deleted task: off the board, final')
    .argument('<id>', 'the task id')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: JsonOptions) => (await load()).tasksArchive(id, o, ctx.io)));
  tasks
    .command('ack')
    .description("acknowledge a task's pending completion notices for its session (no completion turn carries them)")
    .argument('<id>', 'the task id')
    .requiredOption('--session <id>', 'the session acknowledging: only the session that submitted the task may')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: TaskAckOptions) => (await load()).tasksAck(id, o, ctx.io)));
}
