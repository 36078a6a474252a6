import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

/** `demiurge verify` (the implementation loads on use: `verify.ts`). */
export function registerVerify(program: Command, ctx: CommandContext): void {
  program
    .command('verify')
    .description(
      'check the store: every page of the file, the hash chain of the log, every stream against its lifecycle machine, the seed invariants, and every projection against a fresh rebuild (exit 1 on any violation)',
    )
    .addOption(homeOption())
    .option('--head', 'check the hash chain only and print its head (position and hash) to keep elsewhere')
    .option(
      '--expect-head <position:hash>',
      'a head kept from an earlier "verify --head": fail unless the log still passes through it',
    )
    .addOption(jsonOption('print one JSON report'))
    .action(
      action(ctx, async (o: JsonOptions & { head?: boolean; expectHead?: string }) =>
        (await import('./verify.js')).verifyCommand(resolveHome(o.home), o, ctx.io),
      ),
    );
}
