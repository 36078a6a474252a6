/**
 * Keeps the last `limit` bytes of a stream of chunks (and counts all of them), for bounded command output.
 *
 * @example
 * ```ts
 * const tail = new TailBuffer(32 * 1024);
 * child.stdout.on('data', (chunk: Buffer) => tail.push(chunk));
 * tail.text(); // the last 32 KiB, starting on a whole UTF-8 character
 * ```
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte pushed, kept or not. */
  total = 0;

  constructor(readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    // Drop whole chunks from the front while what remains still covers the limit.
    for (let first = this.chunks[0]; first !== undefined && this.kept - first.length >= this.limit; ) {
      this.chunks.shift();
      this.kept -= first.length;
      first = this.chunks[0];
    }
  }

  /** Whether bytes were dropped. */
  get truncated(): boolean {
    return this.total > this.limit;
  }

  /** The kept bytes (at most `limit`), decoded as UTF-8 from the first whole character. */
  text(): string {
    let bytes = Buffer.concat(this.chunks);
    if (bytes.length > this.limit) bytes = bytes.subarray(bytes.length - this.limit);
    let start = 0;
    if (this.truncated) while (start < 3 && start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
    return bytes.subarray(start).toString('utf8');
  }
}
