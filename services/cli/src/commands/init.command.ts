import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

/** `demiurge init` (the implementation loads on use: `init.ts`). */
export function registerInit(program: Command, ctx: CommandContext): void {
  program
    .command('init')
    .description(
      'create the home (0700), its runtime dir (0700), a commented config.yaml and the store; keeps what exists',
    )
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(
      action(ctx, async (o: JsonOptions) => (await import('./init.js')).initCommand(resolveHome(o.home), o, ctx.io)),
    );
}
