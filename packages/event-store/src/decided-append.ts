import type { AppendOptions, AppendResult, AppendStream } from './event-store.js';

/**
 * One listing of a projector's collection, read under the store's write lock for a {@link DecidedAppend}: at
 * most `limit` documents in id order (only ids starting with `prefix`).
 */
export interface LockedListing {
  readonly projector: string;
  readonly collection: string;
  readonly prefix?: string;
  readonly limit: number;
  /**
   * A field of each listed document that names a stream: that stream's head is read with it (the version the
   * decision appends at) and, with `joinCollection`, the projector's document of that collection whose id is
   * the same value (the aggregate's own view, say).
   */
  readonly streamField?: string;
  readonly joinCollection?: string;
  /**
   * Documents of any projector that the append's projectors will read for each listed stream, named by
   * `idPrefix` + the stream id (the operator view's entry of a work item, say): a store that reads the listings
   * under its lock may read these with them and hand them to its projectors, which then load nothing of their
   * own. A hint only: it changes no result, and `decide` does not see them.
   */
  readonly alsoRead?: readonly {
    readonly projector: string;
    readonly collection: string;
    readonly idPrefix?: string;
  }[];
}

/** A listed document, with the stream its `streamField` names and the joined document. */
export interface LockedEntry {
  readonly id: string;
  readonly doc: unknown;
  /** The value of `streamField` (undefined without one). */
  readonly streamId?: string;
  /** That stream's current version (0: no such stream). */
  readonly streamVersion?: number;
  /** The document of `joinCollection` whose id is `streamId` (undefined when there is none). */
  readonly joined?: unknown;
}

/**
 * An append decided inside the store's write transaction from read models as they are under its write lock,
 * so that concurrent deciders (other hosts, other callers of this host) never decide on a stale view: claiming
 * the oldest due work item without racing anyone for it is the use case.
 */
export interface DecidedAppend<R> {
  readonly listings: readonly LockedListing[];
  /**
   * Decides from `listed` (one array per listing, in order) the streams to append and the caller's result.
   * `taken` holds the streams that appends committed earlier in the same transaction write: their documents in
   * `listed` are as before those appends, so decide nothing on them. Synchronous and free of side effects
   * beyond its result: it may be called again (when its transaction is retried), the last call counts.
   */
  decide(
    listed: readonly (readonly LockedEntry[])[],
    taken: ReadonlySet<string>,
  ): { readonly streams: readonly AppendStream[]; readonly result: R };
  /** The append's options; an idempotency key is refused (a decision is not replayed). */
  readonly options?: AppendOptions;
}

/** The decision's result, and what it appended (undefined when it decided on no streams). */
export interface DecidedAppendResult<R> {
  readonly result: R;
  readonly appended: AppendResult | undefined;
}
