import type { RecordedEvent } from '@demiurge/contracts';
import type { Lifecycle } from './define-lifecycle.js';
import { describeRefusal } from './errors.js';
import { evolveRun, initialRunFacts, namesStaleLease, type RunFacts } from './folds/run.fold.js';
import { evolveWork, initialWorkFacts, namesStaleClaim, type WorkFacts } from './folds/work.fold.js';
import { lifecycles as allLifecycles } from './lifecycles.js';
import { machineStep } from './machine-step.js';
import { allowedEvents } from './transitions.js';

/** What is wrong with one recorded event. */
export type LogViolationKind = 'illegal_transition' | 'version_gap' | 'unknown_event' | 'stale_token';

/**
 * One violation found in the log: the event (stream, version, position, type), the state its
 * stream was in, and what that state allows. `expectedVersion` is set for a `version_gap`.
 */
export interface LogViolation {
  readonly kind: LogViolationKind;
  readonly streamType: string;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly position: number;
  readonly state: string;
  readonly event: string;
  readonly allowed: readonly string[];
  readonly expectedVersion?: number;
  readonly message: string;
}

/** Which machines a verifier checks with. */
export interface LogVerifierOptions {
  /** The machines to check with, by `streamType`; default every lifecycle of this package. */
  readonly lifecycles?: readonly Lifecycle[];
  /**
   * Also apply the folds' fencing: an event naming a lease (run) or claim (work item) token that no longer
   * holds its aggregate changes nothing in the folds, and is reported as `stale_token` (the cursor ignores it
   * too). Default false: the machines alone (what the machine tests compare with). `demiurge verify` sets it.
   */
  readonly fencing?: boolean;
}

/**
 * An incremental, synchronous log checker: feed it events in position order. It keeps only
 * `{ state, version }` per stream (O(streams) memory) and never holds events.
 */
export interface LogVerifier {
  /** Checks one event; returns its violations (usually none). */
  check(event: RecordedEvent): readonly LogViolation[];
  readonly eventsChecked: number;
  readonly streams: number;
}

interface StreamCursor {
  version: number;
  /** The machine state, or '' for a stream type without a machine. */
  state: string;
  /** A fenced aggregate's facts (its current lease or claim token), as its fold has them. */
  facts?: unknown;
}

/**
 * The fencing rules of the folds: an event naming a lease or claim token that no longer holds the aggregate
 * changes nothing there, so the log has no business holding one (a writer skipped the token check).
 */
interface Fencing<F> {
  readonly initial: F;
  readonly stale: (facts: F, event: RecordedEvent) => boolean;
  readonly evolve: (facts: F, event: RecordedEvent) => F | undefined;
}
const fencing = new Map<string, Fencing<unknown>>([
  ['work', { initial: initialWorkFacts, stale: namesStaleClaim, evolve: evolveWork } as Fencing<WorkFacts>],
  ['run', { initial: initialRunFacts, stale: namesStaleLease, evolve: evolveRun } as Fencing<RunFacts>],
] as [string, Fencing<unknown>][]);

const CLEAN: readonly LogViolation[] = Object.freeze([]);

/**
 * Creates a {@link LogVerifier}. Events of stream types with no machine are not
 * transition-checked, but their stream versions must still be contiguous from 1.
 * @example
 * const verifier = createLogVerifier();
 * for await (const event of store.iterate()) for (const v of verifier.check(event)) console.log(v.message);
 */
export function createLogVerifier(options: LogVerifierOptions = {}): LogVerifier {
  const machines = new Map<string, Lifecycle>((options.lifecycles ?? allLifecycles).map((l) => [l.streamType, l]));
  const streams = new Map<string, StreamCursor>();
  let eventsChecked = 0;
  return {
    get eventsChecked() {
      return eventsChecked;
    },
    get streams() {
      return streams.size;
    },
    check(event) {
      eventsChecked++;
      const lifecycle = machines.get(event.streamType);
      let cursor = streams.get(event.streamId);
      if (!cursor) {
        cursor = { version: 0, state: lifecycle?.initialState ?? '' };
        streams.set(event.streamId, cursor);
      }
      let found: LogViolation[] | undefined;
      const expectedVersion = cursor.version + 1;
      if (event.streamVersion !== expectedVersion) {
        found = [
          violation('version_gap', event, cursor.state, [], {
            expectedVersion,
            message: `${where(event)}: stream ${event.streamId} jumps from version ${cursor.version} to ${event.streamVersion} (expected ${expectedVersion})`,
          }),
        ];
      }
      cursor.version = event.streamVersion;
      if (!lifecycle || cursor.state === '') return found ?? CLEAN;
      const fence = options.fencing ? fencing.get(event.streamType) : undefined;
      if (fence) {
        const facts = cursor.facts ?? fence.initial;
        if (fence.stale(facts, event)) {
          // The folds ignore it: so does the cursor.
          const stale = violation('stale_token', event, cursor.state, allowedEvents(lifecycle, cursor.state), {
            message: `${where(event)}: ${event.type} names a ${event.streamType === 'run' ? 'lease' : 'claim'} token that no longer holds ${event.streamType} ${event.streamId}; it changes nothing`,
          });
          return found ? [...found, stale] : [stale];
        }
        cursor.facts = fence.evolve(facts, event) ?? facts;
      }
      const next = machineStep(lifecycle, cursor.state, event);
      if (next !== undefined) {
        cursor.state = next;
        return found ?? CLEAN;
      }
      const known = lifecycle.events.includes(event.type);
      const allowed = allowedEvents(lifecycle, cursor.state);
      const refusal = describeRefusal(lifecycle.aggregate, event.streamId, cursor.state, event.type, allowed, !known);
      const illegal = violation(known ? 'illegal_transition' : 'unknown_event', event, cursor.state, allowed, {
        message: `${where(event)}: ${refusal}`,
      });
      return found ? [...found, illegal] : [illegal];
    },
  };
}

function where(event: RecordedEvent): string {
  return `position ${event.position} (${event.streamType} ${event.streamId} v${event.streamVersion})`;
}

function violation(
  kind: LogViolationKind,
  event: RecordedEvent,
  state: string,
  allowed: readonly string[],
  extra: { message: string; expectedVersion?: number },
): LogViolation {
  return {
    kind,
    streamType: event.streamType,
    streamId: event.streamId,
    streamVersion: event.streamVersion,
    position: event.position,
    state,
    event: event.type,
    allowed,
    ...extra,
  };
}

/** Options of {@link verifyLog}: the machines, a violation callback, and how many violations to keep. */
export interface VerifyLogOptions extends LogVerifierOptions {
  /** Called with every violation as it is found (to stream them out). */
  readonly onViolation?: (violation: LogViolation) => void;
  /** How many violations the report keeps (all are counted and passed to `onViolation`). Default 1000. */
  readonly maxViolations?: number;
}

/** What {@link verifyLog} found: counts, and the first violations in log order. */
export interface VerifyReport {
  /** True when no violation was found. */
  readonly ok: boolean;
  readonly eventsChecked: number;
  readonly streams: number;
  /** Every violation found, kept or not. */
  readonly violationCount: number;
  /** The first `maxViolations` violations, in log order. */
  readonly violations: readonly LogViolation[];
}

/**
 * Replays a log (in position order) through every stream's machine and reports each illegal
 * transition, unknown event and stream version gap with its stream, version, position and state.
 * Streams the input and keeps O(streams) memory; the report keeps at most `maxViolations`.
 * @example
 * const report = await verifyLog(store.iterate());
 * if (!report.ok) for (const v of report.violations) console.error(v.message);
 */
export async function verifyLog(
  events: AsyncIterable<RecordedEvent> | Iterable<RecordedEvent>,
  options: VerifyLogOptions = {},
): Promise<VerifyReport> {
  const verifier = createLogVerifier(options);
  const max = options.maxViolations ?? 1000;
  const kept: LogViolation[] = [];
  let violationCount = 0;
  const take = (event: RecordedEvent) => {
    const found = verifier.check(event);
    for (const v of found) {
      violationCount++;
      if (kept.length < max) kept.push(v);
      options.onViolation?.(v);
    }
  };
  if (Symbol.asyncIterator in events) {
    for await (const event of events) take(event);
  } else {
    for (const event of events) take(event);
  }
  return {
    ok: violationCount === 0,
    eventsChecked: verifier.eventsChecked,
    streams: verifier.streams,
    violationCount,
    violations: kept,
  };
}
