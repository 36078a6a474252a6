import type { RecordedEvent } from '@demiurge/contracts';

/** Options for listing a projector's documents: ordered by id, paged by `after`. */
export interface ListOptions {
  /** Only ids greater than this one. */
  readonly after?: string;
  /** Only ids starting with this prefix. */
  readonly prefix?: string;
  readonly limit?: number;
}

/**
 * A projector's view of its read model inside the append transaction: documents (JSON values)
 * by collection and id. Every backend implements it with the same semantics (SQLite tables,
 * memory maps, later Postgres), so a projector is written once. Synchronous, because it runs
 * inside the commit.
 */
export interface ProjectionTx {
  get<T = unknown>(collection: string, id: string): T | undefined;
  /** Inserts or replaces a document. */
  put(collection: string, id: string, doc: unknown): void;
  delete(collection: string, id: string): void;
  list<T = unknown>(collection: string, options?: ListOptions): T[];
  /** Removes every document of one collection, or of the whole projector. */
  clear(collection?: string): void;
}

/**
 * How a projector keeps up with the log:
 * - `inline` (the default): applied in the append transaction, so its read model is never behind the log;
 * - `async`: a read model that only serves people (counts, running lists). A store may apply it after the
 *   commit, in later transactions, with a bounded lag; every read through `projection(name)` first brings
 *   it to the head, and `close` leaves it there. The SQLite store does so; the memory and PostgreSQL stores
 *   apply it inline (a lag of zero is a valid bound).
 */
export type ProjectorMode = 'inline' | 'async';

/**
 * A projector: applied in the append transaction (inline), or shortly after it (`mode: 'async'`).
 * Bump `version` when `apply` changes meaning; the store then rebuilds it from the log at open.
 */
export interface Projector {
  readonly name: string;
  readonly version: number;
  /** The event types it applies; others are never passed to `apply`. */
  readonly handles: readonly string[];
  /** `inline` when absent; see {@link ProjectorMode}. */
  readonly mode?: ProjectorMode;
  apply(event: RecordedEvent, tx: ProjectionTx): void;
  /** Brings the read model back to empty before a rebuild. */
  reset(tx: ProjectionTx): void;
}

export interface ProjectorDefinition {
  readonly name: string;
  readonly version: number;
  readonly handles: readonly string[];
  /** `inline` when absent; see {@link ProjectorMode}. */
  readonly mode?: ProjectorMode;
  apply(event: RecordedEvent, tx: ProjectionTx): void;
  reset?(tx: ProjectionTx): void;
}

const PROJECTOR_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * Declares a projector; `reset` defaults to clearing every document it wrote.
 * @example
 * export const counter = defineProjector({
 *   name: 'counter', version: 1, handles: ['session.created'],
 *   apply: (_event, tx) => tx.put('totals', 'sessions', (tx.get<number>('totals', 'sessions') ?? 0) + 1),
 * });
 */
export function defineProjector(def: ProjectorDefinition): Projector {
  if (!PROJECTOR_NAME.test(def.name)) throw new Error(`projector name "${def.name}" must be kebab-case`);
  if (!Number.isInteger(def.version) || def.version < 1) {
    throw new Error(`projector ${def.name} has version ${def.version}; it must be an integer >= 1`);
  }
  if (def.handles.length === 0) throw new Error(`projector ${def.name} handles no event types`);
  return {
    name: def.name,
    version: def.version,
    handles: [...def.handles],
    ...(def.mode === 'async' ? { mode: def.mode } : {}),
    apply: def.apply,
    reset: def.reset ?? ((tx) => tx.clear()),
  };
}

/** Where a projector is in the log. */
export interface ProjectorCheckpoint {
  readonly name: string;
  readonly version: number;
  /** The last log position the read model includes. */
  readonly position: number;
}

/** Read access to one projector's documents, from outside the append transaction. */
export interface ProjectionReader {
  get<T = unknown>(collection: string, id: string): Promise<T | undefined>;
  list<T = unknown>(collection: string, options?: ListOptions): Promise<T[]>;
  /** Like {@link list}, with each document's id. */
  entries<T = unknown>(collection: string, options?: ListOptions): Promise<{ id: string; doc: T }[]>;
  /** Every document, by collection then id, in id order. For tests and `demiurge rebuild`. */
  dump(): Promise<Record<string, Record<string, unknown>>>;
  /**
   * The number of documents in each non-empty collection, counted by the store without loading them
   * (what `demiurge status` and `rebuild` summarise).
   */
  counts(): Promise<Record<string, number>>;
  checkpoint(): Promise<ProjectorCheckpoint>;
}
