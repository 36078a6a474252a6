import type { RecordedEvent } from '@demiurge/contracts';

/** Longer streams are not kept (they are read from the file): the cache holds at most max × this many events. */
const MAX_EVENTS = 256;
/** Heads of streams this store wrote but does not hold whole, at most this many. */
const MAX_HEADS = 4096;

interface Head {
  readonly stream_version: number;
  readonly stream_type: string;
}

/**
 * The recently read or written streams of one store, so that a command loading the aggregate another command
 * just wrote (claim, then succeed) does not read and decode it again. Exact, not a guess: a stream is kept
 * whole (versions 1..n), extended by this store's own commits, dropped when a commit does not follow it, and
 * everything is forgotten when another connection committed (`PRAGMA data_version` moved). The events are the
 * ones the store publishes (validated and stamped at append, like a decoded read), frozen when first served,
 * since every reader now shares them; callers get a copy of the list. Bounded: at most 1,024 streams of up to
 * 256 events; the least recently used are forgotten first.
 */
export class StreamCache {
  private readonly streams = new Map<string, RecordedEvent[]>();
  /**
   * The head of each stream this store's commits wrote since `dataVersion` (whole or not): what its next
   * append's expected-version check needs, for a command that decided from a read model instead of the stream.
   */
  private readonly heads = new Map<string, Head>();
  private dataVersion = -1;

  constructor(private readonly max = 1024) {}

  /** The whole stream from `fromVersion` when it is known at `dataVersion`, else undefined. */
  read(streamId: string, fromVersion: number, dataVersion: number): RecordedEvent[] | undefined {
    if (dataVersion !== this.dataVersion) {
      this.forget(dataVersion);
      return undefined;
    }
    const events = this.streams.get(streamId);
    if (!events) return undefined;
    this.streams.delete(streamId);
    this.streams.set(streamId, events);
    // Frozen when first served (not at each commit: most committed events are never read back).
    return events.slice(Math.max(0, fromVersion - 1)).map(freeze);
  }

  /**
   * The head (last version and stream type) of a stream known whole at `dataVersion`, else undefined: what an
   * append's expected-version check needs, without reading the events index. Nothing is copied or frozen.
   */
  head(streamId: string, dataVersion: number): Head | undefined {
    if (dataVersion !== this.dataVersion) return undefined;
    const events = this.streams.get(streamId);
    const last = events?.[events.length - 1];
    return last ? { stream_version: last.streamVersion, stream_type: last.streamType } : this.heads.get(streamId);
  }

  /** A whole stream (versions 1..n) read at `dataVersion`. */
  remember(streamId: string, events: readonly RecordedEvent[], dataVersion: number): void {
    if (dataVersion !== this.dataVersion) this.forget(dataVersion);
    if (events.length <= MAX_EVENTS) this.put(streamId, events.map(freeze));
  }

  /**
   * This store committed `events` in a transaction that began at `dataVersion` (its own commit does not move
   * its data version): streams they follow are extended, new ones kept, the others dropped, and every written
   * stream's head is known. A commit at another data version first forgets everything (another connection
   * committed in between).
   */
  committed(events: readonly RecordedEvent[], dataVersion: number): void {
    if (dataVersion !== this.dataVersion) this.forget(dataVersion);
    for (const event of events) {
      const known = this.streams.get(event.streamId);
      if (known && known.length === event.streamVersion - 1 && known.length < MAX_EVENTS) known.push(event);
      else if (event.streamVersion === 1) this.put(event.streamId, [event]);
      else this.streams.delete(event.streamId);
      this.heads.delete(event.streamId);
      this.heads.set(event.streamId, { stream_version: event.streamVersion, stream_type: event.streamType });
      if (this.heads.size > MAX_HEADS) this.heads.delete(this.heads.keys().next().value!);
    }
  }

  /** Another connection committed: nothing known holds any more. */
  private forget(dataVersion: number): void {
    this.streams.clear();
    this.heads.clear();
    this.dataVersion = dataVersion;
  }

  private put(streamId: string, events: RecordedEvent[]): void {
    this.streams.delete(streamId);
    this.streams.set(streamId, events);
    if (this.streams.size > this.max) this.streams.delete(this.streams.keys().next().value!);
  }
}

/** Freezes a value and everything it holds (events are plain JSON data). */
function freeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) freeze(inner);
  }
  return value;
}
