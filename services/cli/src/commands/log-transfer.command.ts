import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

/** `demiurge export`, `import` and `migrate` (the implementation loads on use: `log-transfer.ts`). */
export function registerLogTransfer(program: Command, ctx: CommandContext): void {
  program
    .command('export')
    .description(
      "write the home store's log as NDJSON, one stored event per line in position order (to stdout, or --out FILE)",
    )
    .option('--out <file>', 'write to this new file instead of stdout')
    .addOption(homeOption())
    .action(
      action(ctx, async (o: { home?: string; out?: string }) =>
        (await import('./log-transfer.js')).exportCommand(resolveHome(o.home), o.out ? { out: o.out } : {}, ctx.io),
      ),
    );
  program
    .command('import')
    .description(
      "append an export's events into the home's store, which must be empty (positions, ids and hash chain kept), then build the projections",
    )
    .argument('<file>', 'an NDJSON file written by "demiurge export"')
    .addOption(homeOption())
    .addOption(jsonOption('print one JSON report'))
    .action(
      action(ctx, async (file: string, o: JsonOptions) =>
        (await import('./log-transfer.js')).importCommand(resolveHome(o.home), file, o, ctx.io),
      ),
    );
  program
    .command('migrate')
    .description(
      "copy the home's SQLite log into an empty PostgreSQL database, rebuild the projections there, and verify that both logs (chain heads) and their projections are equal (exit 1 if not)",
    )
    .requiredOption('--to <url>', 'the PostgreSQL database: postgres://user:password@host:port/database')
    .addOption(homeOption())
    .addOption(jsonOption('print one JSON report'))
    .action(
      action(ctx, async (o: JsonOptions & { to: string }) =>
        (await import('./log-transfer.js')).migrateCommand(resolveHome(o.home), o, ctx.io),
      ),
    );
}
