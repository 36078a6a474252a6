import {
  type Clock,
  createIdGenerator,
  domainEvents,
  type EventRegistry,
  type IdGenerator,
  type RecordedEvent,
  systemClock,
} from '@demiurge/contracts';
import { type Observable, Subject } from 'rxjs';
import { type AppendPlan, checkExpectedVersion, planAppend, toRecorded } from './append-plan.js';
import { catchUpSubscription, iterateInBatches } from './catch-up.js';
import { StoreClosedError, StreamTypeMismatchError } from './errors.js';
import type {
  AppendOptions,
  AppendResult,
  AppendStream,
  EventStore,
  IterateOptions,
  ReadAllOptions,
  ReadStreamOptions,
  RebuildOptions,
  RebuildReport,
  SubscribeOptions,
} from './event-store.js';
import { type DocumentMap, MemoryProjectionTx, selectIds } from './memory-projection-tx.js';
import type { ProjectionReader, Projector, ProjectorCheckpoint } from './projector.js';
import { applyOne, assertDistinctProjectors, selectProjectors } from './projector-set.js';

/** What an in-memory store holds; pass the same one to a new store to "reopen" it. */
export interface InMemoryLog {
  /** Recorded events, position i + 1 at index i, data and meta as JSON text. */
  readonly rows: StoredRow[];
  readonly streams: Map<string, { type: string; positions: number[] }>;
  readonly keys: Map<string, number[]>;
  readonly documents: Map<string, DocumentMap>;
  readonly checkpoints: Map<string, { version: number; position: number }>;
}

interface StoredRow extends Omit<RecordedEvent, 'data' | 'meta'> {
  readonly data: string;
  readonly meta: string;
}

export function createInMemoryLog(): InMemoryLog {
  return { rows: [], streams: new Map(), keys: new Map(), documents: new Map(), checkpoints: new Map() };
}

export interface InMemoryEventStoreOptions {
  readonly registry?: EventRegistry;
  readonly projectors?: readonly Projector[];
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** An existing log to open; projectors whose version changed are rebuilt from it. */
  readonly log?: InMemoryLog;
}

/**
 * The in-memory {@link EventStore}: the same semantics as the SQLite store (checked by one conformance
 * suite), for tests and simulations.
 */
export function createInMemoryEventStore(options: InMemoryEventStoreOptions = {}): EventStore {
  return new InMemoryEventStore(options);
}

class InMemoryEventStore implements EventStore {
  readonly registry: EventRegistry;
  readonly projectorNames: readonly string[];
  private readonly projectors: readonly Projector[];
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly log: InMemoryLog;
  private readonly live = new Subject<RecordedEvent>();
  readonly events$: Observable<RecordedEvent> = this.live.asObservable();
  private closed = false;

  constructor(options: InMemoryEventStoreOptions) {
    this.registry = options.registry ?? domainEvents;
    this.projectors = options.projectors ?? [];
    assertDistinctProjectors(this.projectors);
    this.projectorNames = this.projectors.map((p) => p.name);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? createIdGenerator(this.clock);
    this.log = options.log ?? createInMemoryLog();
    for (const projector of this.projectors) {
      const cp = this.log.checkpoints.get(projector.name);
      if (!cp || cp.version !== projector.version) this.resetProjector(projector);
      this.catchUp(projector);
    }
  }

  async append(input: AppendStream | readonly AppendStream[], options?: AppendOptions): Promise<AppendResult> {
    this.assertOpen();
    const plan = planAppend(input, options, { registry: this.registry, ids: this.ids, clock: this.clock });
    const replay = plan.idempotencyKey === undefined ? undefined : this.log.keys.get(plan.idempotencyKey);
    if (replay) {
      const events = replay.map((p) => this.decode(this.log.rows[p - 1]!));
      return { events, lastPosition: events[events.length - 1]!.position, replayed: true };
    }
    const events = this.record(plan);
    const txs = this.projectors.map((projector) => {
      const tx = new MemoryProjectionTx(this.documentsOf(projector.name));
      for (const event of events) applyOne(projector, event, tx);
      return tx;
    });
    // Commit: nothing above has touched the log.
    const head = this.log.rows.length;
    for (const event of events) {
      this.log.rows.push(this.encode(event));
      const stream = this.log.streams.get(event.streamId);
      if (stream) stream.positions.push(event.position);
      else this.log.streams.set(event.streamId, { type: event.streamType, positions: [event.position] });
    }
    if (plan.idempotencyKey !== undefined) {
      this.log.keys.set(
        plan.idempotencyKey,
        events.map((e) => e.position),
      );
    }
    txs.forEach((tx, i) => {
      tx.commit();
      this.log.checkpoints.set(this.projectors[i]!.name, {
        version: this.projectors[i]!.version,
        position: head + events.length,
      });
    });
    for (const event of events) this.live.next(event);
    return { events, lastPosition: events[events.length - 1]!.position, replayed: false };
  }

  async streamVersion(streamId: string): Promise<number> {
    this.assertOpen();
    return this.log.streams.get(streamId)?.positions.length ?? 0;
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    const positions = this.log.streams.get(streamId)?.positions ?? [];
    const start = Math.max(0, (options?.fromVersion ?? 1) - 1);
    const end = options?.limit === undefined ? undefined : start + options.limit;
    return positions.slice(start, end).map((p) => this.decode(this.log.rows[p - 1]!));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.readRange(options?.from ?? 1, options?.limit ?? Number.POSITIVE_INFINITY, options?.types);
  }

  iterate(options?: IterateOptions): AsyncIterable<RecordedEvent> {
    return iterateInBatches(
      (from, limit) => {
        this.assertOpen();
        return this.readRange(from, limit, options?.types);
      },
      options?.from ?? 1,
      options?.batchSize ?? 1000,
    );
  }

  async head(): Promise<number> {
    this.assertOpen();
    return this.log.rows.length;
  }

  subscribe(options?: SubscribeOptions): Observable<RecordedEvent> {
    const from = options?.from ?? this.log.rows.length + 1;
    return catchUpSubscription(
      async (start, limit) => this.readRange(start, limit, options?.types),
      this.events$,
      from,
      options?.types,
    );
  }

  projection(name: string): ProjectionReader {
    const projector = selectProjectors(this.projectors, [name])[0]!;
    const docs = () => this.documentsOf(projector.name);
    return {
      get: async (collection, id) => new MemoryProjectionTx(docs()).get(collection, id),
      list: async (collection, options) => new MemoryProjectionTx(docs()).list(collection, options),
      entries: async <T>(collection: string, options?: Parameters<ProjectionReader['list']>[1]) => {
        const map = docs().get(collection) ?? new Map<string, string>();
        return selectIds(map.keys(), options).map((id) => ({ id, doc: JSON.parse(map.get(id)!) as T }));
      },
      dump: async () => {
        const out: Record<string, Record<string, unknown>> = {};
        for (const collection of selectIds(docs().keys(), undefined)) {
          const map = docs().get(collection)!;
          const entries: Record<string, unknown> = {};
          for (const id of selectIds(map.keys(), undefined)) entries[id] = JSON.parse(map.get(id)!);
          out[collection] = entries;
        }
        return out;
      },
      counts: async () => {
        const out: Record<string, number> = {};
        for (const collection of selectIds(docs().keys(), undefined)) {
          const size = docs().get(collection)!.size;
          if (size > 0) out[collection] = size;
        }
        return out;
      },
      checkpoint: async () => this.checkpointOf(projector),
    };
  }

  async rebuild(options?: RebuildOptions): Promise<RebuildReport> {
    this.assertOpen();
    const started = this.clock.now();
    const selected = selectProjectors(this.projectors, options?.projectors);
    const head = this.log.rows.length;
    let applied = 0;
    for (const projector of selected) {
      this.resetProjector(projector);
      applied += this.catchUp(projector, (position, n) =>
        options?.onProgress?.({
          projectors: selected.map((p) => p.name),
          position,
          head,
          eventsApplied: applied + n,
        }),
      );
    }
    return {
      projectors: selected.map((p) => this.checkpointOf(p)),
      eventsApplied: applied,
      durationMs: this.clock.now() - started,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.live.complete();
  }

  private record(plan: AppendPlan): RecordedEvent[] {
    let position = this.log.rows.length;
    const events: RecordedEvent[] = [];
    for (const stream of plan.streams) {
      const existing = this.log.streams.get(stream.streamId);
      if (existing && existing.type !== stream.streamType) {
        throw new StreamTypeMismatchError(stream.streamId, stream.streamType, existing.type);
      }
      let version = existing?.positions.length ?? 0;
      checkExpectedVersion(stream.streamId, stream.expectedVersion, version);
      for (const event of stream.events) events.push(toRecorded(plan, stream, event, ++position, ++version));
    }
    return events;
  }

  private readRange(from: number, limit: number, types: readonly string[] | undefined): RecordedEvent[] {
    const wanted = types ? new Set(types) : undefined;
    const out: RecordedEvent[] = [];
    for (let i = Math.max(0, from - 1); i < this.log.rows.length && out.length < limit; i++) {
      const row = this.log.rows[i]!;
      if (!wanted || wanted.has(row.type)) out.push(this.decode(row));
    }
    return out;
  }

  private resetProjector(projector: Projector): void {
    const tx = new MemoryProjectionTx(this.documentsOf(projector.name));
    tx.clear();
    projector.reset(tx);
    tx.commit();
    this.log.checkpoints.set(projector.name, { version: projector.version, position: 0 });
  }

  /** Applies every event past the projector's checkpoint; returns how many it applied. */
  private catchUp(projector: Projector, onBatch?: (position: number, applied: number) => void): number {
    const cp = this.log.checkpoints.get(projector.name)!;
    const head = this.log.rows.length;
    const tx = new MemoryProjectionTx(this.documentsOf(projector.name));
    let applied = 0;
    for (const event of this.readRange(cp.position + 1, Number.POSITIVE_INFINITY, projector.handles)) {
      applyOne(projector, event, tx);
      applied++;
    }
    tx.commit();
    this.log.checkpoints.set(projector.name, { version: projector.version, position: head });
    onBatch?.(head, applied);
    return applied;
  }

  private checkpointOf(projector: Projector): ProjectorCheckpoint {
    const cp = this.log.checkpoints.get(projector.name) ?? { version: projector.version, position: 0 };
    return { name: projector.name, ...cp };
  }

  private documentsOf(name: string): DocumentMap {
    let docs = this.log.documents.get(name);
    if (!docs) {
      docs = new Map();
      this.log.documents.set(name, docs);
    }
    return docs;
  }

  private encode(event: RecordedEvent): StoredRow {
    return { ...event, data: JSON.stringify(event.data), meta: JSON.stringify(event.meta) };
  }

  private decode(row: StoredRow): RecordedEvent {
    return {
      ...row,
      data: this.registry.read(row.type, row.schemaVersion, JSON.parse(row.data)),
      meta: JSON.parse(row.meta),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }
}
