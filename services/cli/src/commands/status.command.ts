import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

/** `demiurge status` (the implementation loads on use: `status.ts`). */
export function registerStatus(program: Command, ctx: CommandContext): void {
  program
    .command('status')
    .description(
      'the operator view: log head, sessions, live runs, open approvals, tasks, work, what needs an operator',
    )
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(
      action(ctx, async (o: JsonOptions) =>
        (await import('./status.js')).statusCommand(resolveHome(o.home), o, ctx.io),
      ),
    );
}
