import { createHash, randomBytes } from 'node:crypto';

/** A trace context as the log records it: the trace, and the span the aggregate's own spans hang under. */
export interface TraceRef {
  /** 32 lower-case hex digits. */
  readonly traceId: string;
  /** 16 lower-case hex digits. */
  readonly spanId: string;
}

/**
 * The trace a root of work starts (a turn, or a schedule fire that no turn caused), derived from its id alone:
 * every process (the host, a recovering one, another host on PostgreSQL) computes the same ids, so events
 * appended anywhere name the same trace and span without asking anyone.
 * @example
 * traceRoot('trn_01...'); // { traceId: '4bf9…', spanId: '00f0…' }
 */
export function traceRoot(id: string): TraceRef {
  const digest = createHash('sha256').update(`demiurge:${id}`).digest('hex');
  return { traceId: nonZero(digest.slice(0, 32)), spanId: nonZero(digest.slice(32, 48)) };
}

/** All-zero ids are invalid in W3C trace context; a digest that gives one (never in practice) gets a 1. */
const nonZero = (hex: string) => (/^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex);

/**
 * The SDK's id generator with a slot for the next span's ids: a root span derived from a turn gets that turn's
 * {@link traceRoot} ids (so the ids recorded in the log are the ids the exported span carries); every other
 * span gets random ids as usual. Starting a span is synchronous, so the slot is taken by the span started right
 * after it was set.
 */
export class TraceIdSlot {
  private next: TraceRef | undefined;

  /** Runs `start` with `ref` as the ids of the span it starts. */
  with<T>(ref: TraceRef, start: () => T): T {
    this.next = ref;
    try {
      return start();
    } finally {
      this.next = undefined;
    }
  }

  generateTraceId(): string {
    return this.next?.traceId ?? randomHex(16);
  }

  generateSpanId(): string {
    return this.next?.spanId ?? randomHex(8);
  }
}

function randomHex(bytes: number): string {
  return nonZero(randomBytes(bytes).toString('hex'));
}
