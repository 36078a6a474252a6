import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

/** `demiurge doctor` (the implementation loads on use: `doctor.ts`). */
export function registerDoctor(program: Command, ctx: CommandContext): void {
  program
    .command('doctor')
    .description(
      'check the home: config, runtime dir permissions, database settings and schema, projections, Agent Core (exit 1 on a failure, 2 on a bad config)',
    )
    .addOption(homeOption())
    .addOption(jsonOption('print one JSON report'))
    .action(
      action(ctx, async (o: JsonOptions) =>
        (await import('./doctor.js')).doctorCommand(resolveHome(o.home), o, ctx.io),
      ),
    );
}
