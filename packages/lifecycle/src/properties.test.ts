import { propertySettings } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type LogEntry, recordLog, referenceStep, sampleEvents } from '../test/support.js';
import {
  checkEvents,
  foldState,
  type Lifecycle,
  type LifecycleEvent,
  lifecycles,
  nextState,
  taskLifecycle,
  verifyLog,
} from './index.js';

/**
 * Event sequences for one stream: at each step an event the machine accepts (with probability
 * `legalBias` / 10), else any event of the vocabulary.
 */
function eventSequence(lifecycle: Lifecycle, maxLength: number, legalBias = 8): fc.Arbitrary<LifecycleEvent[]> {
  const samples = sampleEvents(lifecycle);
  const step = fc.record({ legal: fc.integer({ min: 0, max: 9 }).map((n) => n < legalBias), pick: fc.nat() });
  return fc.array(step, { maxLength }).map((choices) => {
    let state = lifecycle.initialState;
    const events: LifecycleEvent[] = [];
    for (const { legal, pick } of choices) {
      const accepted = samples.filter((event) => nextState(lifecycle, state, event) !== undefined);
      const candidates = legal && accepted.length > 0 ? accepted : samples;
      const event = candidates[pick % candidates.length]!;
      events.push(event);
      state = nextState(lifecycle, state, event) ?? state;
    }
    return events;
  });
}

/** Only the events the machine accepts, in order. */
function acceptedOnly(lifecycle: Lifecycle, events: readonly LifecycleEvent[]): LifecycleEvent[] {
  let state = lifecycle.initialState;
  return events.filter((event) => {
    const next = nextState(lifecycle, state, event);
    if (next !== undefined) state = next;
    return next !== undefined;
  });
}

/** The states a stream passes through, from xstate's own `transition` (refused events leave it in place). */
function referenceRun(lifecycle: Lifecycle, events: readonly LifecycleEvent[]) {
  let state: string = lifecycle.initialState;
  const refused: { index: number; state: string }[] = [];
  const trace: string[] = [];
  events.forEach((event, index) => {
    const next = referenceStep(lifecycle, state, event);
    if (next === undefined) refused.push({ index, state });
    else state = next;
    trace.push(state);
  });
  return { state, refused, trace };
}

const toLog = (lifecycle: Lifecycle, events: readonly LifecycleEvent[], streamId = 's1') =>
  recordLog(events.map((event) => ({ streamType: lifecycle.streamType, streamId, ...event })));

describe.each(lifecycles.map((lifecycle: Lifecycle) => [lifecycle.streamType, lifecycle] as const))(
  '%s machine properties',
  (_, lifecycle) => {
    it("verifyLog's verdict equals the machine's on random event sequences", async () => {
      await fc.assert(
        fc.asyncProperty(eventSequence(lifecycle, 25, 7), async (events) => {
          const reference = referenceRun(lifecycle, events);
          const report = await verifyLog(toLog(lifecycle, events));
          expect(report.violations.map((v) => [v.kind, v.position, v.state])).toEqual(
            reference.refused.map((r) => ['illegal_transition', r.index + 1, r.state]),
          );
        }),
        propertySettings(),
      );
    });

    it("folding an accepted sequence gives the machine's state, and its log verifies clean", async () => {
      await fc.assert(
        fc.asyncProperty(eventSequence(lifecycle, 25), async (events) => {
          const accepted = acceptedOnly(lifecycle, events);
          expect(foldState(lifecycle, accepted)).toBe(referenceRun(lifecycle, events).state);
          expect((await verifyLog(toLog(lifecycle, accepted))).ok).toBe(true);
        }),
        propertySettings(),
      );
    });

    it('turns a repeated idempotent command into a no-op wherever the first one was accepted', () => {
      fc.assert(
        fc.property(eventSequence(lifecycle, 20), (events) => {
          const state = foldState(lifecycle, acceptedOnly(lifecycle, events));
          for (const { event: type } of lifecycle.idempotent) {
            for (const event of sampleEvents(lifecycle).filter((e) => e.type === type)) {
              const after = nextState(lifecycle, state, event);
              if (after === undefined) continue;
              const repeat = { ...event, data: event.data ?? {} };
              expect(checkEvents(lifecycle, state, [repeat, repeat])).toEqual([repeat]);
              expect(checkEvents(lifecycle, after, [repeat])).toEqual([]);
            }
          }
        }),
        propertySettings(),
      );
    });
  },
);

describe('task invariants (seed 000) on every accepted task sequence', () => {
  it('a cancelled task never returns to an active state; a deleted task never leaves deleted except to archived', () => {
    fc.assert(
      fc.property(eventSequence(taskLifecycle, 40, 9), (events) => {
        const { trace } = referenceRun(taskLifecycle, acceptedOnly(taskLifecycle, events));
        const live = ['created', 'active', 'waiting', 'blocked'];
        const cancelledAt = trace.indexOf('cancelled');
        if (cancelledAt >= 0) expect(trace.slice(cancelledAt).filter((s) => live.includes(s))).toEqual([]);
        const deletedAt = trace.indexOf('deleted');
        if (deletedAt >= 0) {
          expect(trace.slice(deletedAt).every((s) => s === 'deleted' || s === 'archived')).toBe(true);
        }
        const archivedAt = trace.indexOf('archived');
        if (archivedAt >= 0) expect(trace.slice(archivedAt).every((s) => s === 'archived')).toBe(true);
      }),
      propertySettings(200),
    );
  });
});

describe('verifyLog on an interleaved multi-stream log', () => {
  // Streams are picked by index so a counterexample prints small; their events are all accepted.
  const stream = fc.nat(lifecycles.length - 1).chain((i) => {
    const lifecycle: Lifecycle = lifecycles[i]!;
    return eventSequence(lifecycle, 12, 10).map((events) => ({ machine: i, events: acceptedOnly(lifecycle, events) }));
  });
  const lifecycleOf = (s: { machine: number }): Lifecycle => lifecycles[s.machine]!;

  it('reports exactly the one injected illegal event, at its position, and nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stream, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { minLength: 80, maxLength: 80 }),
        fc.nat(),
        fc.nat(),
        async (streams, picks, at, which) => {
          const cursors = streams.map((s) => ({ lifecycle: lifecycleOf(s), events: s.events, next: 0 }));
          const entries: (LogEntry & { stream: number })[] = [];
          for (const pick of picks) {
            const open = cursors.map((_, i) => i).filter((i) => cursors[i]!.next < cursors[i]!.events.length);
            if (open.length === 0) break;
            const i = open[pick % open.length]!;
            const c = cursors[i]!;
            entries.push({ stream: i, streamType: c.lifecycle.streamType, streamId: `s${i}`, ...c.events[c.next++]! });
          }
          // Inject, after `at` events, an event that stream's machine refuses in the state it is in there.
          const index = at % (entries.length + 1);
          const target = index < entries.length ? entries[index]!.stream : 0;
          const lifecycle = lifecycleOf(streams[target]!);
          const before = entries.slice(0, index).filter((e) => e.stream === target);
          const state = foldState(lifecycle, before);
          const illegal = sampleEvents(lifecycle).filter((e) => nextState(lifecycle, state, e) === undefined);
          const injected = {
            stream: target,
            streamType: lifecycle.streamType,
            streamId: `s${target}`,
            ...illegal[which % illegal.length]!,
          };
          const log = recordLog([...entries.slice(0, index), injected, ...entries.slice(index)]);

          expect((await verifyLog(recordLog(entries))).ok).toBe(true);
          const report = await verifyLog(log);
          expect(report.violations.map((v) => [v.position, v.streamId, v.state, v.event])).toEqual([
            [index + 1, `s${target}`, state, injected.type],
          ]);
        },
      ),
      propertySettings(),
    );
  });
});
