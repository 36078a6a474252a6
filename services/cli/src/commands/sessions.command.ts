import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

const load = () => import('./sessions.js');

/** `demiurge sessions list|show|compact` (the implementations load on use: `sessions.ts`, `sessions-compact.ts`). */
export function registerSessions(program: Command, ctx: CommandContext): void {
  const sessions = program
    .command('sessions')
    .description('list sessions, show one with its transcript and turns, compact one');
  sessions
    .command('list')
    .description('every session, oldest first')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (o: JsonOptions) => (await load()).sessionsList(o, ctx.io)));
  sessions
    .command('show')
    .description('one session: its view, transcript, turns and runs')
    .argument('<id>', 'the session id (ses_...)')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (id: string, o: JsonOptions) => (await load()).sessionsShow(id, o, ctx.io)));
  sessions
    .command('compact')
    .description("summarize the session's older messages for the model now (the transcript keeps them)")
    .argument('<id>', 'the session id (ses_...)')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(
      action(ctx, async (id: string, o: JsonOptions) =>
        (await import('./sessions-compact.js')).sessionsCompact(id, o, ctx.io),
      ),
    );
}
