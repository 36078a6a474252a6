import type { EventStore } from './event-store.js';
import type { ListOptions, ProjectionReader, ProjectorCheckpoint } from './projector.js';

/**
 * What a typed reader needs of a store: its projections by name. An `EventStore` is one; a test can pass
 * anything with the same `projection` method.
 */
export type ProjectionSource = Pick<EventStore, 'projection'>;

/** One collection of a read model whose documents are all `T`: the typed face of a {@link ProjectionReader}. */
export interface TypedCollection<T> {
  get(id: string): Promise<T | undefined>;
  list(options?: ListOptions): Promise<T[]>;
  entries(options?: ListOptions): Promise<{ id: string; doc: T }[]>;
}

/**
 * The typed view of one collection. Projector packages use it to build their readers, so the document
 * type of each collection is stated once, next to the projector that writes it.
 * @example
 * const runs = typedCollection<RunView>(store.projection('runs'), 'runs');
 * const run = await runs.get(runId); // RunView | undefined
 */
export function typedCollection<T>(reader: ProjectionReader, collection: string): TypedCollection<T> {
  return {
    get: (id) => reader.get<T>(collection, id),
    list: (options) => reader.list<T>(collection, options),
    entries: (options) => reader.entries<T>(collection, options),
  };
}

/**
 * Every document of the named projections (all of the store's by default), by projector name: what
 * `demiurge rebuild` and `verify` compare, and what golden-log tests snapshot.
 */
export async function dumpProjections(
  store: Pick<EventStore, 'projection' | 'projectorNames'>,
  names: readonly string[] = store.projectorNames,
): Promise<Record<string, Record<string, Record<string, unknown>>>> {
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const name of names) out[name] = await store.projection(name).dump();
  return out;
}

/** A projector's checkpoint and the number of documents in each of its collections. */
export interface ProjectionSummary extends ProjectorCheckpoint {
  readonly collections: Record<string, number>;
}

/** Each projector's checkpoint and document counts, for `demiurge status` and `rebuild`. */
export async function summarizeProjections(
  store: Pick<EventStore, 'projection' | 'projectorNames'>,
): Promise<ProjectionSummary[]> {
  const out: ProjectionSummary[] = [];
  for (const name of store.projectorNames) {
    const reader = store.projection(name);
    out.push({ ...(await reader.checkpoint()), collections: await reader.counts() });
  }
  return out;
}
