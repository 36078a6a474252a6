import { streamId } from './fixtures.js';

/** A fixed set of streams with their current versions, visited round-robin. */
export class StreamSet {
  readonly ids: readonly string[];
  readonly versions: number[];
  private cursor = 0;

  constructor(count: number) {
    this.ids = Array.from({ length: count }, (_, i) => streamId(i));
    this.versions = this.ids.map(() => 0);
  }

  /** The index of the next stream in turn. */
  next(): number {
    const i = this.cursor;
    this.cursor = (this.cursor + 1) % this.ids.length;
    return i;
  }
}
