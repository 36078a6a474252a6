import type { RecordedEvent } from '@demiurge/contracts';
import { propertySettings } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamVersionConflictError } from '../errors.js';
import type { AppendResult, AppendStream, EventStore } from '../event-store.js';
import type { ConformanceContext } from './conformance.js';

type Expectation = 'right' | 'stale' | 'ahead' | 'any' | 'no_stream';
interface AppendCommand {
  readonly streams: ReadonlyArray<{
    readonly stream: string;
    readonly expect: Expectation;
    readonly events: readonly number[];
  }>;
  readonly key: string | undefined;
}

const appendCommand: fc.Arbitrary<AppendCommand> = fc.record({
  streams: fc.uniqueArray(
    fc.record({
      stream: fc.constantFrom('s0', 's1', 's2', 's3'),
      expect: fc.constantFrom<Expectation>('right', 'right', 'right', 'stale', 'ahead', 'any', 'no_stream'),
      events: fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 3, selector: (s) => s.stream },
  ),
  key: fc.option(fc.constantFrom('k0', 'k1', 'k2', 'k3', 'k4'), { nil: undefined }),
});

/** A batch of appends issued together (group commit) or one at a time. */
const step = fc.record({ concurrent: fc.boolean(), appends: fc.array(appendCommand, { minLength: 1, maxLength: 5 }) });

/** The model: stream versions and the events each idempotency key recorded. */
class Model {
  readonly versions = new Map<string, number>();
  readonly keys = new Map<string, readonly RecordedEvent[]>();
  events = 0;

  toStreams(command: AppendCommand): AppendStream[] {
    return command.streams.map(({ stream, expect, events }) => {
      const v = this.versions.get(stream) ?? 0;
      const expectedVersion =
        expect === 'right' ? v : expect === 'stale' ? Math.max(0, v - 1) : expect === 'ahead' ? v + 1 : expect;
      return {
        streamType: 'counter',
        streamId: stream,
        expectedVersion,
        events: events.map((by) => ({ type: 'test.incremented', data: { by } })),
      };
    });
  }

  /** Checks one outcome against the model (in call order) and advances it. */
  check(command: AppendCommand, streams: readonly AppendStream[], outcome: PromiseSettledResult<AppendResult>): void {
    const replay = command.key === undefined ? undefined : this.keys.get(command.key);
    if (replay) {
      expect(outcome.status).toBe('fulfilled');
      const result = (outcome as PromiseFulfilledResult<AppendResult>).value;
      expect(result.replayed).toBe(true);
      expect(result.events).toEqual(replay);
      return;
    }
    const ok = streams.every((s) => {
      const v = this.versions.get(s.streamId) ?? 0;
      return s.expectedVersion === 'any' || (s.expectedVersion === 'no_stream' ? v === 0 : s.expectedVersion === v);
    });
    if (!ok) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StreamVersionConflictError);
      return;
    }
    expect(outcome.status).toBe('fulfilled');
    const result = (outcome as PromiseFulfilledResult<AppendResult>).value;
    expect(result.replayed).toBe(false);
    let i = 0;
    for (const s of streams) {
      const v = this.versions.get(s.streamId) ?? 0;
      s.events.forEach((_, k) => {
        expect(result.events[i]).toMatchObject({
          streamId: s.streamId,
          streamVersion: v + k + 1,
          position: this.events + i + 1,
        });
        i++;
      });
      this.versions.set(s.streamId, v + s.events.length);
    }
    this.events += i;
    if (command.key !== undefined) this.keys.set(command.key, result.events);
  }
}

async function dumpAll(store: EventStore): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of store.projectorNames) out[name] = await store.projection(name).dump();
  return out;
}

export function definePropertyConformance(ctx: ConformanceContext): void {
  describe('properties', () => {
    it('random multi-stream appends with conflicts keep versions contiguous, positions increasing, replays exact and rebuilds equal to live', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
          const { store } = await ctx.open();
          try {
            const model = new Model();
            for (const { concurrent, appends } of steps) {
              const prepared = appends.map((command) => ({ command, streams: model.toStreams(command) }));
              const run = (p: (typeof prepared)[number]) =>
                store.append(p.streams, p.command.key === undefined ? undefined : { idempotencyKey: p.command.key });
              const outcomes = concurrent
                ? await Promise.allSettled(prepared.map(run))
                : await prepared.reduce<Promise<PromiseSettledResult<AppendResult>[]>>(
                    async (acc, p) => [...(await acc), ...(await Promise.allSettled([run(p)]))],
                    Promise.resolve([]),
                  );
              prepared.forEach((p, i) => {
                model.check(p.command, p.streams, outcomes[i]!);
              });
            }
            const all = await store.readAll();
            expect(all.map((e) => e.position)).toEqual(all.map((_, i) => i + 1));
            expect(all).toHaveLength(model.events);
            for (const [stream, version] of model.versions) {
              expect((await store.readStream(stream)).map((e) => e.streamVersion)).toEqual(
                Array.from({ length: version }, (_, i) => i + 1),
              );
            }
            const live = await dumpAll(store);
            await store.rebuild({ batchSize: 3 });
            expect(await dumpAll(store)).toEqual(live);
          } finally {
            await store.close();
          }
        }),
        propertySettings(40),
      );
    });
  });
}
