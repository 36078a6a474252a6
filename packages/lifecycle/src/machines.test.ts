import { DemiurgeError } from '@demiurge/contracts';
import { getShortestPaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { eventKey, recordLog, referenceStep, sampleEvents } from '../test/support.js';
import {
  allowedEvents,
  assertTransition,
  foldState,
  IllegalTransitionError,
  type Lifecycle,
  type LifecycleEvent,
  lifecycles,
  nextState,
  transitionTable,
  verifyLog,
} from './index.js';

/** The events (from `none`) that reach each state by a shortest path, found by @xstate/graph. */
function shortestPathsTo(lifecycle: Lifecycle): Map<string, LifecycleEvent[]> {
  const paths = getShortestPaths(lifecycle.machine, { events: sampleEvents(lifecycle) });
  const byState = new Map<string, LifecycleEvent[]>();
  for (const path of paths) {
    byState.set(
      path.state.value as string,
      path.steps.slice(1).map((step) => step.event as LifecycleEvent),
    );
  }
  return byState;
}

const allowedIn = (lifecycle: Lifecycle, state: string) => [
  ...new Set(
    transitionTable(lifecycle)
      .filter((row) => row.from === state)
      .map((row) => row.event),
  ),
];

describe.each(lifecycles.map((lifecycle: Lifecycle) => [lifecycle.streamType, lifecycle] as const))(
  '%s machine',
  (_, lifecycle) => {
    const paths = shortestPathsTo(lifecycle);
    const samples = sampleEvents(lifecycle);

    it('reaches every state from none (shortest paths from @xstate/graph)', () => {
      expect([...paths.keys()].sort()).toEqual([...lifecycle.states].sort());
    });

    it('exercises every edge of its transition table along a path, and the log of that path verifies clean', async () => {
      const table = transitionTable(lifecycle);
      const covered = new Set<string>();
      for (const from of lifecycle.states) {
        for (const event of samples) {
          const expected = referenceStep(lifecycle, from, event);
          if (expected === undefined) continue;
          const path = [...paths.get(from)!, event];
          expect(foldState(lifecycle, path)).toBe(expected);
          expect(assertTransition(lifecycle, from, event)).toBe(expected);
          const log = recordLog(path.map((e) => ({ streamType: lifecycle.streamType, streamId: 's1', ...e })));
          expect((await verifyLog(log)).violations).toEqual([]);
          covered.add(`${from} ${event.type} ${expected}`);
        }
      }
      expect([...covered].sort()).toEqual(table.map((row) => `${row.from} ${row.event} ${row.to}`).sort());
    });

    it('refuses every illegal (state, event) pair with the allowed events of that state', async () => {
      for (const from of lifecycle.states) {
        for (const event of samples) {
          if (referenceStep(lifecycle, from, event) !== undefined) continue;
          expect(nextState(lifecycle, from, event), `${from} + ${eventKey(event)}`).toBeUndefined();
          let error: unknown;
          try {
            assertTransition(lifecycle, from, event, 'stream-1');
          } catch (e) {
            error = e;
          }
          expect(error).toBeInstanceOf(IllegalTransitionError);
          expect(error).toBeInstanceOf(DemiurgeError);
          expect(error).toMatchObject({
            aggregate: lifecycle.aggregate,
            streamId: 'stream-1',
            from,
            event: event.type,
            allowed: allowedIn(lifecycle, from),
            code: 'illegal_transition',
          });
          const log = recordLog(
            [...paths.get(from)!, event].map((e) => ({ streamType: lifecycle.streamType, streamId: 's1', ...e })),
          );
          const report = await verifyLog(log);
          expect(report.violations).toHaveLength(1);
          expect(report.violations[0]).toMatchObject({
            kind: 'illegal_transition',
            position: log.length,
            state: from,
            event: event.type,
            allowed: allowedIn(lifecycle, from),
          });
        }
      }
    });

    it('agrees with xstate transition() on every (state, event) pair, and lists allowed events from the table', () => {
      for (const from of lifecycle.states) {
        expect(allowedEvents(lifecycle, from)).toEqual(allowedIn(lifecycle, from));
        for (const event of samples)
          expect(nextState(lifecycle, from, event)).toBe(referenceStep(lifecycle, from, event));
      }
    });

    it('is created only by its creation events, from none, and never again', () => {
      expect(lifecycle.creationEvents.length).toBeGreaterThan(0);
      for (const type of lifecycle.creationEvents) {
        for (const state of lifecycle.states.filter((s) => s !== 'none')) {
          expect(nextState(lifecycle, state, type)).toBeUndefined();
        }
      }
    });

    it('describes every guarded branch', () => {
      for (const row of transitionTable(lifecycle)) {
        const branches = transitionTable(lifecycle).filter((r) => r.from === row.from && r.event === row.event);
        if (branches.length > 1) expect(row.condition, `${row.from} ${row.event}`).toBeTruthy();
      }
    });
  },
);
