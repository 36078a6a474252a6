import type { RecordedEvent } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { renderEvent } from '../render.js';
import { openRuntimeStore } from '../runtime-store.js';

/** A live subscription to the store's log (rxjs, through the store's types). */
type Subscription = ReturnType<ReturnType<EventStore['subscribe']>['subscribe']>;

export interface EventsOptions {
  readonly json: boolean;
  readonly from: number;
  readonly limit: number | undefined;
  readonly types: readonly string[] | undefined;
  readonly stream?: string | undefined;
  readonly follow?: boolean;
}

async function* streamEvents(store: EventStore, streamId: string, from: number): AsyncIterable<RecordedEvent> {
  for (const event of await store.readStream(streamId)) if (event.position >= from) yield event;
}

/**
 * `demiurge events`: the log from a position, one event per line (NDJSON with --json), streamed in batches;
 * with `follow`, a catch-up subscription (history, then every commit of any process) until told to stop.
 */
export async function eventsCommand(paths: HomePaths, options: EventsOptions, io: CommandIo): Promise<void> {
  const store = await openRuntimeStore(paths, true);
  const wanted = (e: RecordedEvent) =>
    (!options.stream || e.streamId === options.stream) && (!options.types || options.types.includes(e.type));
  const print = (e: RecordedEvent) => io.out(options.json ? JSON.stringify(e) : renderEvent(e));
  try {
    if (options.follow) {
      await follow(store, options, io, wanted, print);
      return;
    }
    let printed = 0;
    const source = options.stream
      ? streamEvents(store, options.stream, options.from)
      : store.iterate({ from: options.from, ...(options.types ? { types: options.types } : {}) });
    for await (const event of source) {
      if (!wanted(event)) continue;
      if (options.limit !== undefined && printed >= options.limit) break;
      print(event);
      printed++;
    }
    if (!options.json) io.err(`${printed} event(s) from position ${options.from}; head is ${await store.head()}`);
  } finally {
    await store.close();
  }
}

function follow(
  store: EventStore,
  options: EventsOptions,
  io: CommandIo,
  wanted: (e: RecordedEvent) => boolean,
  print: (e: RecordedEvent) => void,
): Promise<void> {
  if (options.limit === 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let printed = 0;
    let done = false;
    let subscription: Subscription | undefined;
    let stopWatching = () => {};
    // The store tails other processes on an unref'd timer: this keeps the process waiting for them.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const finish = (err?: unknown) => {
      if (done) return;
      done = true;
      clearInterval(keepAlive);
      stopWatching();
      subscription?.unsubscribe();
      if (err === undefined) resolve();
      else reject(err);
    };
    subscription = store
      .subscribe({ from: options.from, ...(options.types ? { types: options.types } : {}) })
      .subscribe({
        next: (event) => {
          if (done || !wanted(event)) return;
          print(event);
          printed++;
          if (options.limit !== undefined && printed >= options.limit) finish();
        },
        error: (err: unknown) => finish(err),
        complete: () => finish(),
      });
    if (done) {
      subscription.unsubscribe();
      return;
    }
    if (io.onStop) stopWatching = io.onStop(() => finish());
    if (!options.json) io.err(`following the log from position ${options.from} (Ctrl-C to stop)`);
  });
}
