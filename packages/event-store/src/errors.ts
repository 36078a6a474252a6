import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/** What an append expected of a stream: its exact version, that it does not exist, or anything. */
export type ExpectedVersion = number | 'no_stream' | 'any';

/** A stream was not at the version the append expected; nothing was appended. */
export class StreamVersionConflictError extends DemiurgeError {
  override readonly name = 'StreamVersionConflictError';
  readonly code = ErrorCode.StreamVersionConflict;
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(
      `stream ${streamId} is at version ${actual === 0 ? '0 (no stream)' : actual}, but the append expected ${
        expected === 'no_stream' ? 'no stream' : `version ${expected}`
      }`,
    );
  }
}

/** A stream id was appended to under a different stream type than it was created with. */
export class StreamTypeMismatchError extends DemiurgeError {
  override readonly name = 'StreamTypeMismatchError';
  readonly code = ErrorCode.StreamTypeMismatch;
  constructor(
    readonly streamId: string,
    readonly expectedType: string,
    readonly actualType: string,
  ) {
    super(`stream ${streamId} is a "${actualType}" stream; an append named it "${expectedType}"`);
  }
}

/** The append request itself is malformed (no events, a bad version, a duplicate stream...). */
export class InvalidAppendError extends DemiurgeError {
  override readonly name = 'InvalidAppendError';
  readonly code = ErrorCode.InvalidAppend;
}

/** The database was written by a newer Demiurge than this code; it is left untouched. */
export class DatabaseNewerThanCodeError extends DemiurgeError {
  override readonly name = 'DatabaseNewerThanCodeError';
  readonly code = ErrorCode.DatabaseNewerThanCode;
  constructor(
    readonly path: string,
    readonly databaseVersion: number | string,
    readonly codeVersion: number,
  ) {
    super(
      `${path} has schema version ${databaseVersion}, newer than this Demiurge understands (${codeVersion}); ` +
        'upgrade Demiurge to open it. It was not changed.',
    );
  }
}

/** The file is not a Demiurge database (not SQLite, or damaged); it is never overwritten or recreated. */
export class CorruptDatabaseError extends DemiurgeError {
  override readonly name = 'CorruptDatabaseError';
  readonly code = ErrorCode.CorruptDatabase;
  constructor(
    readonly path: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${path} is not a usable Demiurge database (${detail}). It was not changed; move it aside or restore a backup.`,
      options,
    );
  }
}

/**
 * The store file is damaged: cut short, a page overwritten, a WAL whose committed frames no longer read back,
 * or SQLite reported corruption while the store was in use. The file was not changed, and the store accepts
 * no more writes (fail-stop): every later call gets this error.
 */
export class DamagedStoreError extends DemiurgeError {
  override readonly name = 'DamagedStoreError';
  readonly code = ErrorCode.CorruptDatabase;
  /** True when the damage was met while the store was in use (it then stopped), false when found at open. */
  readonly inUse: boolean;
  constructor(
    readonly path: string,
    readonly detail: string,
    options?: { cause?: unknown; inUse?: boolean },
  ) {
    super(
      options?.inUse
        ? `damaged store ${path}: ${detail}; the store stopped and accepts no more writes`
        : `damaged store ${path}: ${detail}. Nothing was written to it`,
      options,
    );
    this.inUse = options?.inUse ?? false;
  }
}

/** The database stayed locked by another process past every retry. */
export class StoreBusyError extends DemiurgeError {
  override readonly name = 'StoreBusyError';
  readonly code = ErrorCode.StoreBusy;
  constructor(
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(`the event store stayed locked by another writer for ${waitedMs} ms; try again`, options);
  }
}

/** The store was closed; nothing more can be appended or read through it. */
export class StoreClosedError extends DemiurgeError {
  override readonly name = 'StoreClosedError';
  readonly code = ErrorCode.StoreClosed;
  constructor() {
    super('the event store is closed');
  }
}

/** A projector threw while applying an event; the append was rolled back. */
export class ProjectorFailedError extends DemiurgeError {
  override readonly name = 'ProjectorFailedError';
  readonly code = ErrorCode.ProjectorFailed;
  constructor(
    readonly projector: string,
    readonly eventType: string,
    readonly position: number,
    options: { cause: unknown },
  ) {
    super(
      `projector ${projector} failed on ${eventType} at position ${position}: ${
        options.cause instanceof Error ? options.cause.message : String(options.cause)
      }`,
      options,
    );
  }
}

/** No projector of that name is registered with the store. */
export class UnknownProjectorError extends DemiurgeError {
  override readonly name = 'UnknownProjectorError';
  readonly code = ErrorCode.UnknownProjector;
  constructor(
    readonly projector: string,
    readonly known: readonly string[],
  ) {
    super(`unknown projector "${projector}"; registered: ${known.join(', ') || '(none)'}`);
  }
}
