import { StringDecoder } from 'node:string_decoder';

/** A line for the task log (`task.log`). */
export interface TailLine {
  readonly stream: 'stdout' | 'stderr' | 'progress';
  readonly text: string;
}

/** Every truncation notice in a task log starts with this (so a reader can tell the tail is partial). */
export const TRUNCATION_MARK = '[log truncated';

export interface LogTailOptions {
  /** At most this many output lines per batch (the newest); older ones since the last batch are counted and dropped. */
  readonly lines: number;
  /** Longer lines are cut to this many characters. Default 1000. */
  readonly maxLineChars?: number;
}

interface LineBuffer {
  readonly decoder: StringDecoder;
  text: string;
  cut: boolean;
}

/**
 * Turns output chunks into a bounded task log: whole lines (UTF-8 decoded across chunk boundaries, long lines
 * cut), of which each {@link take} returns at most `lines` — the newest — preceded by a truncation notice when
 * older ones were dropped. Pure bookkeeping, no IO: the handler decides when to take a batch (rate limiting).
 *
 * @example
 * ```ts
 * const tail = new LogTail({ lines: 20 });
 * tail.push('stdout', Buffer.from('a\nb\npartial'));
 * tail.take(); // [{ stream: 'stdout', text: 'a' }, { stream: 'stdout', text: 'b' }]
 * tail.end(); tail.take(); // [{ stream: 'stdout', text: 'partial' }]
 * ```
 */
export class LogTail {
  private readonly limit: number;
  private readonly maxLineChars: number;
  private readonly partial = new Map<'stdout' | 'stderr', LineBuffer>();
  private pending: TailLine[] = [];
  private droppedSinceTake = 0;
  /** Output lines seen in all. */
  lines = 0;
  /** Output lines never logged (dropped between batches). */
  omitted = 0;
  /** Lines cut to `maxLineChars`. */
  cut = 0;

  constructor(options: LogTailOptions) {
    if (!Number.isInteger(options.lines) || options.lines < 1) throw new RangeError('a log tail keeps at least 1 line');
    this.limit = options.lines;
    this.maxLineChars = options.maxLineChars ?? 1000;
  }

  /** Whether a batch is waiting. */
  get hasPending(): boolean {
    return this.pending.length > 0 || this.droppedSinceTake > 0;
  }

  /** Whether anything was dropped or cut so far. */
  get truncated(): boolean {
    return this.omitted > 0 || this.cut > 0;
  }

  push(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    let part = this.partial.get(stream);
    if (!part) {
      part = { decoder: new StringDecoder('utf8'), text: '', cut: false };
      this.partial.set(stream, part);
    }
    const text = part.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl >= 0; nl = text.indexOf('\n', start)) {
      this.append(part, text.slice(start, nl));
      this.complete(stream, part);
      start = nl + 1;
    }
    this.append(part, text.slice(start));
  }

  /** Ends both streams: a last line without a newline becomes a line. */
  end(): void {
    for (const [stream, part] of this.partial) {
      this.append(part, part.decoder.end());
      if (part.text.length > 0 || part.cut) this.complete(stream, part);
    }
  }

  /** The next batch: a truncation notice when lines were dropped since the last one, then up to `lines` lines. */
  take(): TailLine[] {
    const batch: TailLine[] = [];
    if (this.droppedSinceTake > 0) {
      batch.push({
        stream: 'progress',
        text: `${TRUNCATION_MARK}: ${this.droppedSinceTake} lines omitted; the full output is in the task's artifacts]`,
      });
    }
    batch.push(...this.pending);
    this.pending = [];
    this.droppedSinceTake = 0;
    return batch;
  }

  private append(part: LineBuffer, text: string): void {
    if (part.cut || text.length === 0) return;
    const room = this.maxLineChars - part.text.length;
    if (text.length <= room) {
      part.text += text;
      return;
    }
    part.text += text.slice(0, Math.max(0, room));
    part.cut = true;
  }

  private complete(stream: 'stdout' | 'stderr', part: LineBuffer): void {
    const text = part.text.endsWith('\r') ? part.text.slice(0, -1) : part.text;
    if (part.cut) this.cut++;
    this.pending.push({ stream, text: part.cut ? `${text} […cut]` : text });
    this.lines++;
    part.text = '';
    part.cut = false;
    if (this.pending.length > this.limit) {
      const drop = this.pending.length - this.limit;
      this.pending.splice(0, drop);
      this.droppedSinceTake += drop;
      this.omitted += drop;
    }
  }
}
