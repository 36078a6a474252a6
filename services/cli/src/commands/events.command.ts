import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, jsonOption, wholeNumber } from '../options.js';

interface EventsFlags {
  readonly home?: string;
  readonly json: boolean;
  readonly from: number;
  readonly limit?: number;
  readonly type?: string[];
  readonly stream?: string;
  readonly follow: boolean;
}

/** `demiurge events` (the implementation loads on use: `events.ts`). */
export function registerEvents(program: Command, ctx: CommandContext): void {
  program
    .command('events')
    .description('print the event log from a position (NDJSON with --json); --follow keeps printing new events')
    .addOption(homeOption())
    .addOption(jsonOption('one JSON event per line'))
    .option('--from <position>', 'first position to print', wholeNumber('--from', 1), 1)
    .option('--limit <n>', 'print at most n events', wholeNumber('--limit', 0))
    .option('--type <type...>', 'only these event types')
    .option('--stream <id>', 'only the events of this stream (a session, run, task, work item... id)')
    .option(
      '--follow',
      'after the history, print each new event as it is committed (by any process) until SIGINT, SIGTERM or stdin closes',
      false,
    )
    .action(
      action(ctx, async (o: EventsFlags) =>
        (await import('./events.js')).eventsCommand(
          resolveHome(o.home),
          { json: o.json, from: o.from, limit: o.limit, types: o.type, stream: o.stream, follow: o.follow },
          ctx.io,
        ),
      ),
    );
}
