import { createInMemoryEventStore } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import { describe, expect, it } from 'vitest';
import { BackgroundDispatcher } from './background-dispatcher.js';
import type { DispatchOutcome } from './claim-dispatch.js';

/** A runtime whose rounds the test finishes by hand. */
function scriptedRuntime() {
  const rounds: { limit: number; finish: (outcomes: DispatchOutcome[] | Error) => void }[] = [];
  const waiting: (() => void)[] = [];
  return {
    rounds,
    /** Resolves when round `n` (1-based) has started. */
    started: (n: number) =>
      new Promise<void>((resolve) => {
        if (rounds.length >= n) resolve();
        else waiting.push(() => rounds.length >= n && resolve());
      }),
    runtime: {
      dispatchDue: ({ limit }: { limit: number }) =>
        new Promise<DispatchOutcome[]>((resolve, reject) => {
          rounds.push({ limit, finish: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
          for (const w of waiting) w();
        }),
    },
  };
}

const sent = (n: number): DispatchOutcome[] =>
  Array.from({ length: n }, (_, i) => ({
    deliveryId: `dlv_${i}`,
    workId: `wrk_${i}`,
    attempt: 1,
    status: 'sent',
    retryAt: null,
    error: null,
    externalRef: null,
  }));

describe('BackgroundDispatcher', () => {
  it('runs a round at start, on wake, and at once after a full round; close waits for the round in flight', async () => {
    const s = scriptedRuntime();
    const errors: unknown[] = [];
    const dispatched: number[] = [];
    const dispatcher = new BackgroundDispatcher({
      runtime: s.runtime,
      intervalMs: 60_000,
      limit: 2,
      onError: (e) => errors.push(e),
      onDispatched: (o) => dispatched.push(o.length),
    }).start();
    await s.started(1);
    expect(s.rounds[0]!.limit).toBe(2);
    s.rounds[0]!.finish([]);
    // Nothing due: it sleeps (the interval is a minute) until woken.
    await new Promise((r) => setTimeout(r, 20));
    expect(s.rounds).toHaveLength(1);
    dispatcher.wake();
    await s.started(2);
    s.rounds[1]!.finish(sent(2)); // a full round: more may be due, so another round follows at once
    await s.started(3);
    s.rounds[2]!.finish(new Error('store busy'));
    dispatcher.wake();
    await s.started(4);

    let closed = false;
    const closing = dispatcher.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false); // round 4 is still in flight
    s.rounds[3]!.finish(sent(1));
    await closing;
    expect(s.rounds).toHaveLength(4);
    expect(dispatched).toEqual([2, 1]);
    expect(errors).toEqual([new Error('store busy')]);
  });

  it('polls every intervalMs', async () => {
    const s = scriptedRuntime();
    const dispatcher = new BackgroundDispatcher({ runtime: s.runtime, intervalMs: 10, onError: () => {} }).start();
    for (let n = 1; n <= 3; n++) {
      await s.started(n);
      s.rounds[n - 1]!.finish([]);
    }
    await dispatcher.close();
    expect(() => dispatcher.start()).toThrow('start after close');
  });

  it('with events$, a committed event of wakeOn (from any host on PostgreSQL) starts a round at once, not at the next poll', async () => {
    const s = scriptedRuntime();
    const store = createInMemoryEventStore({ registry: testEventRegistry });
    const dispatcher = new BackgroundDispatcher({
      runtime: s.runtime,
      intervalMs: 60_000,
      events$: store.events$,
      wakeOn: ['test.incremented'],
      onError: () => {},
    }).start();
    await s.started(1);
    s.rounds[0]!.finish([]); // the next poll is a minute away
    await new Promise((r) => setTimeout(r, 20));
    expect(s.rounds).toHaveLength(1);
    const events = [{ type: 'test.incremented', data: { by: 1 } }];
    await store.append({ streamType: 'counter', streamId: 'c', expectedVersion: 'any', events });
    await s.started(2);
    s.rounds[1]!.finish([]);
    await dispatcher.close();
  });
});
