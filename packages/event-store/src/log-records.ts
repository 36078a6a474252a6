import { DemiurgeError, ErrorCode, type EventRegistry } from '@demiurge/contracts';

/**
 * One event exactly as a store keeps it: its position, ids, stream and version, the type and the schema
 * version it was written with, `data` and `meta` as the stored JSON text (byte for byte what the hash chain
 * covers), the time, the idempotency key and the chain hash (hex; null for events written before the chain).
 * What `demiurge export` writes one per line and `demiurge import` reads back.
 */
export interface StoredEventRecord {
  readonly position: number;
  readonly eventId: string;
  readonly streamType: string;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: string;
  readonly meta: string;
  readonly recordedAt: string;
  readonly idempotencyKey: string | null;
  readonly hash: string | null;
}

/** The last event of a log: its position and chain hash (hex). Position 0 is an empty log. */
export interface LogHead {
  readonly position: number;
  readonly hash: string;
}

/**
 * The administrative side of a store's log, apart from the {@link EventStore} contract: read every stored
 * event as it is, and append already recorded events (a copy of another log) keeping their positions, ids,
 * versions, times, keys and hashes. No projector runs on an import: open the store afterwards (its open
 * catches projections up from the log) or rebuild. Use it on a store no host is writing to.
 * @example
 * for await (const record of source.records()) batch.push(record);
 * await target.importRecords(batch); // refuses a gap, a version out of order, a hash that does not chain
 */
export interface LogAdmin {
  /** The store, for messages (a file path, or a URL without its password). */
  readonly where: string;
  head(): Promise<LogHead>;
  /** Every stored event in position order, read in batches. */
  records(options?: { readonly batchSize?: number }): AsyncIterable<StoredEventRecord>;
  /**
   * Appends recorded events in one transaction, after checking each: its position follows the head, its
   * stream version follows the stream's (same stream type), its type is known and its data valid, and its
   * hash is the chain's next (recomputed; a null hash is filled in). Returns the new head. Refuses the whole
   * batch with a {@link LogImportError} otherwise.
   */
  importRecords(records: readonly StoredEventRecord[]): Promise<LogHead>;
  close(): Promise<void>;
}

/** A recorded event could not be imported: the position and what was wrong. Nothing of its batch was written. */
export class LogImportError extends DemiurgeError {
  override readonly name = 'LogImportError';
  readonly code = ErrorCode.InvalidAppend;
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`cannot import the event at position ${position}: ${reason}`);
  }
}

/** The head of one stream while a batch is checked: its last version and its type. */
export interface StreamHeadInfo {
  readonly version: number;
  readonly streamType: string;
}

/**
 * Checks one record against what precedes it (the position after `previousPosition`, the version after the
 * stream's head, the type registered and the data valid for its schema version). Pure; the adapters call it
 * for each record of an import, then check the hash themselves.
 */
export function checkImportRecord(
  record: StoredEventRecord,
  previousPosition: number,
  stream: StreamHeadInfo | undefined,
  registry: EventRegistry,
): void {
  const fail = (reason: string) => {
    throw new LogImportError(record.position, reason);
  };
  if (record.position !== previousPosition + 1) {
    fail(`positions must follow the log's head ${previousPosition} without a gap (got ${record.position})`);
  }
  const expected = (stream?.version ?? 0) + 1;
  if (record.streamVersion !== expected) {
    fail(`stream ${record.streamId} is at version ${expected - 1}, this event has version ${record.streamVersion}`);
  }
  if (stream && stream.streamType !== record.streamType) {
    fail(`stream ${record.streamId} is a ${stream.streamType} stream, this event says ${record.streamType}`);
  }
  if (!registry.has(record.type)) fail(`unknown event type ${record.type}`);
  try {
    registry.read(record.type, record.schemaVersion, JSON.parse(record.data));
    JSON.parse(record.meta);
  } catch (err) {
    fail(`invalid ${record.type} event: ${(err as Error).message.split('\n')[0]}`);
  }
}
