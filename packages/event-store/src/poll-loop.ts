import { filter, type Observable } from 'rxjs';

/** A running poll loop. */
export interface PollLoop {
  /** Runs a round now, or right after the one in flight. */
  wake(): void;
  /** Stops starting rounds and waits for the one in flight (it is not aborted). */
  close(): Promise<void>;
}

export interface PollLoopOptions<R> {
  /** One round of work. At most one runs at a time. */
  readonly round: () => Promise<R>;
  /** The pause after a round before the next, unless something wakes the loop. */
  readonly intervalMs: number;
  /** A round that throws is reported here and the loop goes on: a background loop never swallows an error. */
  readonly onError: (error: unknown) => void;
  /** Whether the next round should follow at once (a full batch: more may be due). Default: never. */
  readonly again?: (result: R) => boolean;
  /** Committed events (a store's `events$`); a round starts at once on any of `wakeOn`. */
  readonly events$?: Observable<{ readonly type: string }>;
  readonly wakeOn?: readonly string[];
  /** Pause before the first round; default 0 (the next tick). */
  readonly firstDelayMs?: number;
}

/**
 * The one poll-with-wake loop of the runtime: `round` every `intervalMs`, at once when woken (by `wake()` or
 * a committed event of `wakeOn`), one round at a time. The host's task, completion and scheduler loops and
 * the delivery dispatcher are all this loop.
 * @example
 * const loop = pollLoop({ round: () => worker.runSubmitted(), intervalMs: 250, onError: (e) => log.error(String(e)),
 *   events$: store.events$, wakeOn: ['task.submitted'] });
 * await loop.close();
 */
export function pollLoop<R>(options: PollLoopOptions<R>): PollLoop {
  let stopped = false;
  let inFlight: Promise<void> | undefined;
  let woken = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(kick, ms);
  };
  const kick = (): void => {
    if (stopped) return;
    if (inFlight) {
      woken = true;
      return;
    }
    clearTimeout(timer);
    woken = false;
    inFlight = (async () => {
      let more = false;
      try {
        const result = await options.round();
        more = options.again?.(result) ?? false;
      } catch (error) {
        options.onError(error);
      }
      inFlight = undefined;
      if (stopped) return;
      if (more || woken) schedule(0);
      else schedule(options.intervalMs);
    })();
  };
  const wakeOn = options.wakeOn ?? [];
  const subscription =
    options.events$ && wakeOn.length > 0
      ? options.events$.pipe(filter((e) => wakeOn.includes(e.type))).subscribe(() => setImmediate(kick))
      : undefined;
  schedule(options.firstDelayMs ?? 0);
  return {
    wake: kick,
    async close() {
      stopped = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
      await inFlight;
    },
  };
}
