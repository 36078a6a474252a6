import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { describeStore } from '@demiurge/host';
import { sessionsReader } from '@demiurge/projector-sessions';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { renderSession, renderSummaries } from '../render.js';
import { openRuntimeStore } from '../runtime-store.js';
import { appendSampleSession } from '../sample-session.js';
import { summarizeProjections } from './summaries.js';

/**
 * `demiurge demo`: opens (creating) the embedded store, appends a sample session through the store
 * API, rebuilds every projection from the log and prints what they hold.
 */
export async function demoCommand(paths: HomePaths, options: { json: boolean }, io: CommandIo): Promise<void> {
  const store = await openRuntimeStore(paths, false);
  try {
    const sessionId = await appendSampleSession(store, createIdGenerator(systemClock));
    const report = await store.rebuild();
    const sessions = sessionsReader(store);
    const session = (await sessions.get(sessionId))!;
    const transcript = await sessions.transcript(sessionId);
    const all = await sessions.all();
    const summaries = await summarizeProjections(store);
    if (options.json) {
      io.out(
        JSON.stringify({
          database: describeStore(store),
          head: await store.head(),
          session,
          transcript,
          sessions: all.length,
          projections: summaries,
          rebuild: report,
        }),
      );
      return;
    }
    io.out(`store    ${describeStore(store)}`);
    io.out(
      `log      ${await store.head()} events; rebuilt ${report.eventsApplied} into ${report.projectors.length} projection(s) in ${report.durationMs} ms`,
    );
    io.out('');
    for (const line of renderSession(session, transcript)) io.out(line);
    io.out('');
    io.out(`sessions in this home: ${all.length} (${all.filter((s) => s.status === 'active').length} active)`);
    for (const line of renderSummaries(summaries)) io.out(line);
    io.out('');
    io.out('next: "demiurge events" prints the log, "demiurge rebuild" replays it into the projections.');
  } finally {
    await store.close();
  }
}
