import { NotFoundError } from '@demiurge/control-plane';
import { type RunView, runsReader } from '@demiurge/projector-runs';
import { sessionsReader } from '@demiurge/projector-sessions';
import { orDash, shorten, table } from '../format.js';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { JsonOptions } from '../options.js';
import { renderSession } from '../render.js';
import { withRuntimeStore } from '../runtime-store.js';

/** `demiurge sessions list`: every session, oldest first. */
export async function sessionsList(o: JsonOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const sessions = await sessionsReader(store).all();
    if (o.json) return io.out(JSON.stringify({ sessions }));
    if (sessions.length === 0) return io.out('no sessions');
    for (const line of table(sessions, [
      { heading: 'session', cell: (s) => s.sessionId },
      { heading: 'status', cell: (s) => s.status },
      { heading: 'turns', cell: (s) => String(s.turnCount) },
      { heading: 'messages', cell: (s) => String(s.messageCount) },
      { heading: 'updated', cell: (s) => s.updatedAt },
      { heading: 'title', cell: (s) => shorten(s.title, 60) },
    ]))
      io.out(line);
  });
}

/** `demiurge sessions show ID`: the session, its transcript (compactions marked), turns and runs. */
export async function sessionsShow(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const reader = sessionsReader(store);
    const session = await reader.get(id);
    if (!session) throw new NotFoundError('session', id);
    const transcript = await reader.transcript(id);
    const turns = await reader.turns(id);
    const compactions = await reader.compactions(id);
    const runReader = runsReader(store);
    const entries = await runReader.ofSession(id);
    const runs: RunView[] = [];
    for (const e of entries) {
      const run = await runReader.get(e.runId);
      if (run) runs.push(run);
    }
    if (o.json) return io.out(JSON.stringify({ session, transcript, compactions, turns, runs }));
    for (const line of renderSession(session, transcript, compactions)) io.out(line);
    io.out('');
    io.out(`turns (${turns.length})`);
    if (turns.length > 0) {
      for (const line of table(
        turns,
        [
          { heading: 'turn', cell: (t) => t.turnId },
          { heading: 'status', cell: (t) => t.status },
          { heading: 'run', cell: (t) => orDash(t.runId) },
          { heading: 'steps', cell: (t) => String(t.steps) },
          { heading: 'started', cell: (t) => t.startedAt },
          { heading: 'error', cell: (t) => (t.error ? `${t.error.code}: ${shorten(t.error.message, 60)}` : '-') },
        ],
        '  ',
      ))
        io.out(line);
    }
    io.out(`runs (${runs.length})`);
    if (runs.length > 0) {
      for (const line of table(
        runs,
        [
          { heading: 'run', cell: (r) => r.runId },
          { heading: 'status', cell: (r) => r.status },
          { heading: 'owner', cell: (r) => orDash(r.owner) },
          { heading: 'updated', cell: (r) => r.updatedAt },
        ],
        '  ',
      ))
        io.out(line);
    }
  });
}
