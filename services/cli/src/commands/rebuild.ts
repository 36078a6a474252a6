import { describeStore } from '@demiurge/host';
import { UsageError } from '../cli-errors.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { progressBar } from '../progress.js';
import { renderSummaries } from '../render.js';
import { runtimeProjectorNames, withRuntimeStore } from '../runtime-store.js';
import { summarizeProjections } from './summaries.js';

export interface RebuildOptions {
  readonly json: boolean;
  /** Only this projector; default every one. */
  readonly projector?: string | undefined;
}

/** Refuses a projector name the runtime does not register (exit 2), naming the ones it does. */
export function checkProjectorName(name: string): void {
  if (!runtimeProjectorNames.includes(name)) {
    throw new UsageError(`unknown projector "${name}"; projectors: ${runtimeProjectorNames.join(', ')}`);
  }
}

/**
 * `demiurge rebuild`: resets the projections and replays the log into them in batches, with a progress bar
 * on a terminal and one summary line otherwise.
 */
export async function rebuildCommand(paths: HomePaths, options: RebuildOptions, io: CommandIo): Promise<void> {
  if (options.projector) checkProjectorName(options.projector);
  await withRuntimeStore(paths, async (store) => {
    const bar = progressBar(io.progress, 'rebuild');
    let report: Awaited<ReturnType<typeof store.rebuild>>;
    try {
      report = await store.rebuild({
        ...(options.projector ? { projectors: [options.projector] } : {}),
        onProgress: (p) => bar?.update(p.position, p.head),
      });
    } finally {
      bar?.stop();
    }
    const rebuilt = report.projectors.map((p) => p.name);
    const projections = (await summarizeProjections(store)).filter((s) => rebuilt.includes(s.name));
    const head = await store.head();
    if (options.json) {
      io.out(
        JSON.stringify({
          database: describeStore(store),
          head,
          rebuilt,
          eventsApplied: report.eventsApplied,
          durationMs: report.durationMs,
          projections,
        }),
      );
      return;
    }
    io.out(
      `rebuilt ${rebuilt.length} projection(s) from ${head} events (${report.eventsApplied} applied) in ${report.durationMs} ms`,
    );
    for (const line of renderSummaries(projections)) io.out(line);
  });
}
