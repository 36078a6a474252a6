import type { LogStatements } from './event-rows.js';
import type { StreamCache } from './stream-cache.js';

/** A stream's head as an append's expected-version check needs it. */
export interface StreamHead {
  readonly stream_version: number;
  readonly stream_type: string;
}

/**
 * The heads of the streams an append transaction checks: written earlier in this transaction, else known whole
 * to the stream cache at this transaction's `PRAGMA data_version` (no other connection committed since it was
 * learnt), else read from the file. The cache is exact (see StreamCache), so the expected-version check (the
 * fencing of claims) sees what a read would, without the read of the events index.
 */
export class TransactionStreamHeads {
  private dataVersion = -1;
  /** The streams this transaction appended to: their heads now (the stream cache learns them at commit). */
  private readonly written = new Map<string, StreamHead>();

  constructor(
    private readonly stmts: LogStatements,
    private readonly streams: StreamCache,
  ) {}

  /** The `PRAGMA data_version` of the last transaction begun. */
  get version(): number {
    return this.dataVersion;
  }

  /** A transaction began, at `dataVersion`. */
  begin(dataVersion: number): void {
    this.dataVersion = dataVersion;
    this.written.clear();
  }

  head(streamId: string): StreamHead | undefined {
    return (
      this.written.get(streamId) ?? this.streams.head(streamId, this.dataVersion) ?? this.stmts.streamHead.get(streamId)
    );
  }

  /** An append of this transaction was written whole: the stream is now at `version`. */
  wrote(streamId: string, version: number, streamType: string): void {
    this.written.set(streamId, { stream_version: version, stream_type: streamType });
  }
}
