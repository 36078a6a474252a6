import { DemiurgeError, ErrorCode, type EventRegistry } from '@demiurge/contracts';
import { type ChainedRow, eventHash } from './hash-chain.js';

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

/** The `events` columns of a stored record, in the order the adapters read and insert them. */
export const STORED_EVENT_COLUMNS =
  'position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta, recorded_at, idempotency_key, hash';

/** An `events` row read back with its chain hash (null before the chain). */
export interface StoredEventRow extends ChainedRow {
  hash: Buffer | null;
}

/** The record of a stored row: what `export` writes. */
export function storedRecordOf(row: StoredEventRow): StoredEventRecord {
  return {
    position: row.position,
    eventId: row.event_id,
    streamType: row.stream_type,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    schemaVersion: row.schema_version,
    data: row.data,
    meta: row.meta,
    recordedAt: row.recorded_at,
    idempotencyKey: row.idempotency_key,
    hash: row.hash ? row.hash.toString('hex') : null,
  };
}

/**
 * One record of an import, checked ({@link checkImportRecord}) and chained to `chain` (the log's head so far):
 * the row to insert and its hash. A record whose recorded hash is not the recomputed one is refused with a
 * {@link LogImportError}; a null hash is filled in.
 */
export function chainImportRecord(
  record: StoredEventRecord,
  chain: { readonly position: number; readonly hash: Buffer },
  stream: StreamHeadInfo | undefined,
  registry: EventRegistry,
): { readonly row: ChainedRow; readonly hash: Buffer } {
  checkImportRecord(record, chain.position, stream, registry);
  const row: ChainedRow = {
    position: record.position,
    event_id: record.eventId,
    stream_type: record.streamType,
    stream_id: record.streamId,
    stream_version: record.streamVersion,
    type: record.type,
    schema_version: record.schemaVersion,
    data: record.data,
    meta: record.meta,
    recorded_at: record.recordedAt,
    idempotency_key: record.idempotencyKey,
  };
  const hash = eventHash(chain.hash, row);
  if (record.hash !== null && record.hash !== hash.toString('hex')) {
    throw new LogImportError(record.position, 'its hash does not chain to the events before it');
  }
  return { row, hash };
}
