import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, jsonOption } from '../options.js';

/** `demiurge rebuild` (the implementation loads on use: `rebuild.ts`). */
export function registerRebuild(program: Command, ctx: CommandContext): void {
  program
    .command('rebuild')
    .description('reset projections and replay the log into them (all, or one with --projector)')
    .option('--projector <name>', 'only this projection (an unknown name lists them)')
    .addOption(homeOption())
    .addOption(jsonOption('print one JSON report'))
    .action(
      action(ctx, async (o: { home?: string; json: boolean; projector?: string }) =>
        (await import('./rebuild.js')).rebuildCommand(
          resolveHome(o.home),
          { json: o.json, projector: o.projector },
          ctx.io,
        ),
      ),
    );
}
