import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { renderEvent } from '../render.js';
import { openRuntimeStore } from '../runtime-store.js';

export interface EventsOptions {
  readonly json: boolean;
  readonly from: number;
  readonly limit: number | undefined;
  readonly types: readonly string[] | undefined;
}

/** `demiurge events`: the log from a position, one event per line (NDJSON with --json), streamed in batches. */
export async function eventsCommand(paths: HomePaths, options: EventsOptions, io: CommandIo): Promise<void> {
  const store = await openRuntimeStore(paths, true);
  try {
    let printed = 0;
    for await (const event of store.iterate({
      from: options.from,
      ...(options.types ? { types: options.types } : {}),
    })) {
      if (options.limit !== undefined && printed >= options.limit) break;
      io.out(options.json ? JSON.stringify(event) : renderEvent(event));
      printed++;
    }
    if (!options.json) io.err(`${printed} event(s) from position ${options.from}; head is ${await store.head()}`);
  } finally {
    await store.close();
  }
}
