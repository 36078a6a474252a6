import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { renderSummaries } from '../render.js';
import { openRuntimeStore } from '../runtime-store.js';
import { summarizeProjections } from './summaries.js';

/** `demiurge rebuild`: resets every projection and replays the log into it, in batches, with progress. */
export async function rebuildCommand(paths: HomePaths, options: { json: boolean }, io: CommandIo): Promise<void> {
  const store = await openRuntimeStore(paths, true);
  try {
    let lastShown = 0;
    const report = await store.rebuild({
      onProgress: (p) => {
        if (options.json || (p.position - lastShown < 50_000 && p.position < p.head)) return;
        lastShown = p.position;
        io.err(`rebuild: ${p.position}/${p.head} (${p.eventsApplied} events applied)`);
      },
    });
    const projections = await summarizeProjections(store);
    if (options.json) {
      io.out(
        JSON.stringify({
          database: paths.database,
          head: await store.head(),
          eventsApplied: report.eventsApplied,
          durationMs: report.durationMs,
          projections,
        }),
      );
      return;
    }
    io.out(
      `rebuilt ${projections.length} projection(s) from ${await store.head()} events (${report.eventsApplied} applied) in ${report.durationMs} ms`,
    );
    for (const line of renderSummaries(projections)) io.out(line);
  } finally {
    await store.close();
  }
}
