import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  commandLoop,
  createInMemoryEventStore,
  loadAggregate,
  type StreamFold,
  StreamVersionConflictError,
  streamAppend,
} from './index.js';

const ids = createIdGenerator(systemClock);
const count: StreamFold<number> = { streamType: 'session', initialState: 0, evolve: (n) => n + 1 };

describe('loadAggregate / streamAppend', () => {
  it('folds a stream and appends at the version it read', async () => {
    const store = createInMemoryEventStore();
    const sessionId = ids.next('ses');
    const none = await loadAggregate(store, count, sessionId);
    expect(none).toMatchObject({ state: 0, version: 0, events: [] });
    expect(streamAppend('session', none, []).expectedVersion).toBe('no_stream');
    await store.append([
      streamAppend('session', none, [{ type: 'session.created', data: { sessionId, title: 't', coreId: 'default' } }]),
    ]);
    const one = await loadAggregate(store, count, sessionId);
    expect(one).toMatchObject({ state: 1, version: 1 });
    expect(streamAppend('session', one, []).expectedVersion).toBe(1);
  });
});

describe('commandLoop', () => {
  it('retries a version conflict from a fresh load after a jittered backoff, then succeeds', async () => {
    const store = createInMemoryEventStore();
    const sessionId = ids.next('ses');
    const waits: number[] = [];
    let passes = 0;
    const result = await commandLoop(
      store,
      async () => {
        const loaded = await loadAggregate(store, count, sessionId);
        passes++;
        // Another writer creates the stream between this pass's load and its append (first pass only).
        if (passes === 1) {
          await store.append([
            { streamType: 'session', streamId: sessionId, expectedVersion: 'no_stream', events: [created(sessionId)] },
          ]);
        }
        const events = loaded.state === 0 ? [created(sessionId)] : [archived(sessionId)];
        return { streams: [streamAppend('session', loaded, events)], result: loaded.state };
      },
      { random: () => 0.5, sleep: async (ms) => void waits.push(ms) },
    );
    expect(passes).toBe(2);
    expect(result).toBe(1);
    expect(waits).toEqual([1]);
    expect((await store.readStream(sessionId)).map((e) => e.type)).toEqual(['session.created', 'session.archived']);
  });

  it('gives up after maxAttempts and throws the conflict, with growing capped waits', async () => {
    const store = createInMemoryEventStore();
    const sessionId = ids.next('ses');
    await store.append([
      { streamType: 'session', streamId: sessionId, expectedVersion: 'no_stream', events: [created(sessionId)] },
    ]);
    const waits: number[] = [];
    let passes = 0;
    await expect(
      commandLoop(
        store,
        async () => {
          passes++;
          // Always decides on a stale version: every append conflicts.
          return {
            streams: [streamAppend('session', { streamId: sessionId, version: 0 }, [created(sessionId)])],
            result: 0,
          };
        },
        {
          maxAttempts: 4,
          baseDelayMs: 10,
          maxDelayMs: 30,
          random: () => 0.999,
          sleep: async (ms) => void waits.push(ms),
        },
      ),
    ).rejects.toBeInstanceOf(StreamVersionConflictError);
    expect(passes).toBe(4);
    expect(waits).toEqual([9, 19, 29]);
    expect(await store.readStream(sessionId)).toHaveLength(1);
  });

  it('appends nothing when the decision is empty, and rethrows other errors at once', async () => {
    const store = createInMemoryEventStore();
    expect(await commandLoop(store, async () => ({ streams: [], result: 'noop' }))).toBe('noop');
    let passes = 0;
    await expect(
      commandLoop(store, async () => {
        passes++;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(passes).toBe(1);
  });

  it('backoffDelay is full jitter under an exponential cap', () => {
    expect(backoffDelay(1, { random: () => 0 })).toBe(0);
    expect(backoffDelay(5, { baseDelayMs: 2, maxDelayMs: 100, random: () => 0.5 })).toBe(16);
    expect(backoffDelay(20, { baseDelayMs: 2, maxDelayMs: 100, random: () => 0.5 })).toBe(50);
  });
});

function created(sessionId: string) {
  return { type: 'session.created', data: { sessionId, title: 't', coreId: 'default' } };
}
function archived(sessionId: string) {
  return { type: 'session.archived', data: { sessionId, reason: 'done' } };
}
