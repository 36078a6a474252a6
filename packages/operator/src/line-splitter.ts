const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** What a {@link LineSplitter} reports: a complete line, or a line that went over the limit (reported once). */
export interface LineSink {
  line(text: string): void;
  oversized(limit: number): void;
}

/**
 * Splits a byte stream into `\n`-terminated lines (a trailing `\r` is dropped), holding at most `maxBytes`
 * of an unfinished line (the limit counts every byte before the `\n`). A line that grows past `maxBytes` is
 * reported once through `oversized` and its remaining bytes are dropped as they arrive, up to the next
 * newline, so memory stays bounded however long the line is.
 *
 * @example
 * const splitter = new LineSplitter(1024 * 1024, { line: handle, oversized: () => reject() });
 * socket.on('data', (chunk) => splitter.push(chunk));
 * socket.on('end', () => splitter.end());
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  constructor(
    private readonly maxBytes: number,
    private readonly sink: LineSink,
  ) {}

  /** Bytes of the unfinished line held now; never more than `maxBytes`. */
  get bufferedBytes(): number {
    return this.size;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.discarding) {
        if (newline !== -1) this.discarding = false;
      } else if (this.size + (end - start) > this.maxBytes) {
        this.drop();
        if (newline === -1) this.discarding = true;
      } else if (newline === -1) {
        // Copy so the held bytes do not pin a whole (possibly large) chunk.
        this.parts.push(Buffer.from(chunk.subarray(start, end)));
        this.size += end - start;
      } else {
        this.parts.push(chunk.subarray(start, end));
        this.size += end - start;
        this.flush();
      }
      if (newline === -1) return;
      start = newline + 1;
    }
  }

  /** The input ended: a last line without its newline still counts. */
  end(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    if (this.size > 0) this.flush();
  }

  private drop(): void {
    this.parts = [];
    this.size = 0;
    this.sink.oversized(this.maxBytes);
  }

  private flush(): void {
    let bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN) bytes = bytes.subarray(0, -1);
    this.sink.line(bytes.toString('utf8'));
  }
}
