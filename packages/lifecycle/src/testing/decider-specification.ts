import type { NewEvent, RecordedEvent } from '@demiurge/contracts';

/** A pure decider: `decide` a command in a state, `evolve` a state by one recorded event. */
export interface SpecifiedDecider<C, S> {
  readonly initialState: S;
  decide(command: C, state: S): readonly NewEvent[];
  evolve(state: S, event: RecordedEvent): S;
}

/** An error expectation: its class, and optionally a check of the thrown value. */
type ErrorExpectation = (new (...args: never[]) => Error) | ((error: unknown) => boolean);

const RECORDED_AT = '2026-01-01T00:00:00.000Z';

/** Records given new events as a log would (positions, versions), for a decider's `evolve`. */
export function recordGiven(events: readonly NewEvent[], streamType = 'test', streamId = 'given'): RecordedEvent[] {
  return events.map((event, i) => ({
    position: i + 1,
    eventId: `evt_given_${i + 1}`,
    streamType,
    streamId,
    streamVersion: i + 1,
    type: event.type,
    schemaVersion: 1,
    data: event.data,
    meta: { actor: { kind: 'system', id: 'test' } },
    recordedAt: RECORDED_AT,
  }));
}

/**
 * Given/when/then specifications for a decider, in the style of Emmett's `DeciderSpecification`:
 * given the events already recorded, when a command arrives, then these events (or this error).
 * Framework-free: a failed expectation throws an `Error` naming what differed.
 * @example
 * const spec = deciderSpecification(taskDecider, { streamType: 'task' });
 * spec.given([submitted]).when(cancel).thenAppends([{ type: 'task.cancelled', data }]);
 * spec.given([submitted, deleted]).when(start).thenThrows(IllegalTransitionError);
 */
export function deciderSpecification<C, S>(decider: SpecifiedDecider<C, S>, options: { streamType?: string } = {}) {
  return {
    given(events: readonly NewEvent[]) {
      const state = recordGiven(events, options.streamType).reduce(
        (s, e) => decider.evolve(s, e),
        decider.initialState,
      );
      return {
        when(command: C) {
          const run = () => decider.decide(command, state);
          return {
            thenAppends(expected: readonly NewEvent[]): void {
              const actual = run();
              const a = JSON.stringify(actual.map(({ type, data }) => ({ type, data })));
              const e = JSON.stringify(expected.map(({ type, data }) => ({ type, data })));
              if (a !== e) throw new Error(`decider decided ${a}\n  expected ${e}`);
            },
            thenNothing(): void {
              const actual = run();
              if (actual.length > 0) throw new Error(`decider decided ${JSON.stringify(actual)}; expected nothing`);
            },
            thenThrows(expected: ErrorExpectation): void {
              let thrown: unknown;
              try {
                run();
              } catch (err) {
                thrown = err;
              }
              if (thrown === undefined) throw new Error('decider decided without throwing; expected an error');
              const ok =
                expected.prototype instanceof Error || expected === Error
                  ? thrown instanceof (expected as new (...args: never[]) => Error)
                  : (expected as (error: unknown) => boolean)(thrown);
              if (!ok) throw new Error(`decider threw ${String(thrown)}, not the expected error`);
            },
          };
        },
      };
    },
  };
}
