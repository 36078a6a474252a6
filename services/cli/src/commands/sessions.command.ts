import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, type JsonOptions, jsonOption } from '../options.js';

const load = () => import('./sessions.js');

/** `demiurge sessions list|show` (the implementation loads on use: `sessions.ts`). */
export function registerSessions(program: Command, ctx: CommandContext): void {
  const sessions = program.command('sessions').description('list sessions, show one with its transcript and turns');
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
}
