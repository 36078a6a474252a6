import type { LogStatements } from './event-rows.js';
import type { StreamCache, StreamHead } from './stream-cache.js';

export type { StreamHead };

/**
 * The heads of the streams an append transaction checks: written earlier in this transaction, else known to the
 * stream cache at this transaction's `PRAGMA data_version` (a stream it holds whole, or one this store committed
 * to or read the head of in a write transaction; no other connection committed since it was learnt), else read
 * from the file (and then kept). The cache is exact (see StreamCache), so the expected-version check (the
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

  /** A transaction began, at `dataVersion`. */
  begin(dataVersion: number): void {
    this.dataVersion = dataVersion;
    this.written.clear();
  }

  head(streamId: string): StreamHead | undefined {
    const known = this.written.get(streamId) ?? this.streams.head(streamId, this.dataVersion);
    if (known) return known;
    const read = this.stmts.streamHead.get(streamId);
    // Not written in this transaction (that would be in `written`): the committed head, exact at this data version.
    if (read) this.streams.learnedHead(streamId, read, this.dataVersion);
    return read;
  }

  /** An append of this transaction was written whole: the stream is now at `version`. */
  wrote(streamId: string, version: number, streamType: string): void {
    this.written.set(streamId, { stream_version: version, stream_type: streamType });
  }
}
