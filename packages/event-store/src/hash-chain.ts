// The hash chain every store adapter keeps over its log: the same appends give the same chain on every backend,
// so a copied log (demiurge migrate, import) is proven equal by its head.
import { hash } from 'node:crypto';
/** An `events` row as every store adapter keeps it (data and meta as the stored JSON text). */
export interface EventRow {
  position: number;
  event_id: string;
  stream_type: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: string;
  meta: string;
  recorded_at: string;
}

/** The hash the first event of a store chains to: 32 zero bytes. */
export const GENESIS_HASH: Buffer = Buffer.alloc(32);

/** The columns of an `events` row that its hash covers, as stored: the event's columns and its idempotency key. */
export interface ChainedRow extends EventRow {
  idempotency_key: string | null;
}

/**
 * SHA-256 over the previous event's hash (as 64 hex digits) followed by this event's stored content
 * (position, ids, stream, version, type, schema version, data and meta as stored, recorded_at, idempotency
 * key) encoded as one JSON array, so that no two rows encode alike. One-shot `crypto.hash`: about half the
 * cost of a `createHash` object per event.
 */
export function eventHash(previous: Buffer, row: ChainedRow): Buffer {
  return hash('sha256', chainInput(previous.toString('hex'), row), 'buffer');
}

/**
 * {@link eventHash} with both hashes as hex, for a writer that chains one event to the next: the same digest,
 * but the next event's input needs the hex anyway, and a hex digest is cheaper to get from `crypto.hash` than a
 * `Buffer` (store it with `Buffer.from(hex, 'hex')`).
 * @example
 * let head = GENESIS_HASH.toString('hex');
 * head = eventHashHex(head, row); // === eventHash(GENESIS_HASH, row).toString('hex')
 */
export function eventHashHex(previousHex: string, row: ChainedRow): string {
  return hash('sha256', chainInput(previousHex, row), 'hex');
}

function chainInput(previousHex: string, row: ChainedRow): string {
  return (
    previousHex +
    JSON.stringify([
      row.position,
      row.event_id,
      row.stream_type,
      row.stream_id,
      row.stream_version,
      row.type,
      row.schema_version,
      row.data,
      row.meta,
      row.recorded_at,
      row.idempotency_key,
    ])
  );
}

/** The last event of a chain: its position and hash (hex). Position 0 is an empty log. */
export interface ChainHead {
  readonly position: number;
  readonly hash: string;
}

/** The first event at which the recomputed chain leaves the recorded one. */
export interface ChainBreak {
  readonly position: number;
  readonly reason: string;
}

/** What a store's `verifyChain` found. */
export interface ChainReport {
  readonly ok: boolean;
  readonly eventsChecked: number;
  /** The recorded head (the last event's position and stored hash). */
  readonly head: ChainHead;
  readonly firstBreak?: ChainBreak;
  /** When a kept head was given: whether the log still passes through it. */
  readonly kept?: { readonly head: ChainHead; readonly ok: boolean; readonly reason?: string };
}

/** Recomputes a chain row by row; the first row that does not match is kept. */
export class ChainWalker {
  private previous: Buffer = GENESIS_HASH;
  private position = 0;
  checked = 0;
  firstBreak: ChainBreak | undefined;
  /** The stored hash (hex) at the position of a kept head, once walked past it. */
  keptHash: string | undefined;

  constructor(private readonly keptPosition?: number) {}

  /** Feeds the next row in position order; false once the chain is broken. */
  next(row: ChainedRow & { hash: Buffer | null }): boolean {
    if (this.firstBreak) return false;
    this.checked++;
    if (row.position !== this.position + 1) {
      this.firstBreak = {
        position: row.position,
        reason: `position${row.position - this.position > 2 ? 's' : ''} ${this.position + 1}${
          row.position - this.position > 2 ? `-${row.position - 1}` : ''
        } missing before it: events were removed from the log`,
      };
      return false;
    }
    this.position = row.position;
    if (row.hash === null) {
      this.firstBreak = { position: row.position, reason: 'it has no recorded hash: it was written behind the store' };
      return false;
    }
    const expected = eventHash(this.previous, row);
    if (!expected.equals(row.hash)) {
      this.firstBreak = {
        position: row.position,
        reason: 'its content does not match its recorded hash: it was changed after it was appended',
      };
      return false;
    }
    this.previous = row.hash;
    if (row.position === this.keptPosition) this.keptHash = row.hash.toString('hex');
    return true;
  }
}

/** Whether a chain that verified up to `walker` passes through a head kept earlier. */
export function compareKept(kept: ChainHead, walker: ChainWalker, head: ChainHead): NonNullable<ChainReport['kept']> {
  if (walker.firstBreak && walker.firstBreak.position <= kept.position) {
    return { head: kept, ok: false, reason: `the chain breaks at position ${walker.firstBreak.position}, before it` };
  }
  if (kept.position === 0) return { head: kept, ok: kept.hash === GENESIS_HASH.toString('hex') };
  if (walker.keptHash === undefined) {
    return {
      head: kept,
      ok: false,
      reason: `the log ends at position ${head.position}: the events after it were cut off`,
    };
  }
  if (walker.keptHash !== kept.hash.toLowerCase()) {
    return {
      head: kept,
      ok: false,
      reason: `the event at position ${kept.position} has another hash: the chain was recomputed since`,
    };
  }
  return { head: kept, ok: true };
}

/**
 * Walks the whole chain in position order, `batchSize` rows per read (`readAfter(position, limit)`), and reports
 * the first break and, with `kept`, whether an earlier head is still part of it.
 */
export async function walkChain(
  readAfter: (
    position: number,
    limit: number,
  ) => Promise<readonly (Parameters<ChainWalker['next']>[0] & { position: number })[]>,
  chainHead: () => Promise<ChainHead>,
  options?: { batchSize?: number; kept?: ChainHead },
): Promise<ChainReport> {
  const batchSize = options?.batchSize ?? 5000;
  const walker = new ChainWalker(options?.kept?.position);
  for (let last = 0; ; ) {
    const rows = await readAfter(last, batchSize);
    for (const row of rows) if (!walker.next(row)) break;
    if (walker.firstBreak || rows.length < batchSize) break;
    last = rows[rows.length - 1]!.position;
  }
  const head = await chainHead();
  const kept = options?.kept ? compareKept(options.kept, walker, head) : undefined;
  return {
    ok: walker.firstBreak === undefined && (kept?.ok ?? true),
    eventsChecked: walker.checked,
    head,
    ...(walker.firstBreak ? { firstBreak: walker.firstBreak } : {}),
    ...(kept ? { kept } : {}),
  };
}
