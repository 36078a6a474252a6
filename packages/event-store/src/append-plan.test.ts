import { createEventRegistry, defineEvent, EventMeta, systemActor } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_META, DEFAULT_META_JSON, metaJson, planAppend } from './append-plan.js';
import { eventHash, eventHashHex, GENESIS_HASH } from './hash-chain.js';

const Noted = defineEvent({
  type: 'note.added',
  schemaVersion: 1,
  description: 'A note was added.',
  data: z.object({ text: z.string() }),
});
const registry = createEventRegistry([Noted]);
const deps = { registry, ids: { next: (p: string) => `${p}_1` as never }, clock: { now: () => 1_700_000_000_000 } };
const stream = (meta?: object) => ({
  streamType: 'note',
  streamId: 'n-1',
  expectedVersion: 'any' as const,
  events: [{ type: 'note.added', data: { text: 'hi' }, ...(meta ? { meta } : {}) }],
});

describe('planAppend meta', () => {
  it('gives an event without meta the shared default, stored exactly as a parsed system-actor meta', () => {
    const planned = planAppend(stream(), undefined, deps).streams[0]!.events[0]!;
    expect(planned.meta).toBe(DEFAULT_META);
    expect(Object.isFrozen(planned.meta) && Object.isFrozen(planned.meta.actor)).toBe(true);
    // The hash chain covers the stored text: it must be what the parse path stored before.
    expect(DEFAULT_META_JSON).toBe(JSON.stringify(EventMeta.parse({ actor: systemActor })));
    expect(metaJson(planned.meta)).toBe(DEFAULT_META_JSON);
  });

  it('still validates meta given on the append or the event', () => {
    const withMeta = planAppend(stream({ correlationId: 'c-1' }), undefined, deps).streams[0]!.events[0]!;
    expect(withMeta.meta).toEqual({ actor: systemActor, correlationId: 'c-1' });
    expect(metaJson(withMeta.meta)).toBe(JSON.stringify(withMeta.meta));
    expect(() => planAppend(stream(), { meta: { correlationId: '' } }, deps)).toThrow(/meta/);
  });

  it('parses an actor-only meta once per actor and shares it, stored exactly as the parse path stored it', () => {
    const plan = (meta: object) => planAppend(stream(), { meta }, deps).streams[0]!.events[0]!.meta;
    const first = plan({ actor: { kind: 'system', id: 'worker-a' } });
    const again = plan({ actor: { id: 'worker-a', kind: 'system' } });
    expect(again).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.actor)).toBe(true);
    expect(metaJson(first)).toBe(JSON.stringify(EventMeta.parse({ actor: { kind: 'system', id: 'worker-a' } })));
    expect(plan({ actor: { kind: 'system', id: 'worker-b' } })).not.toBe(first);
    // Not actor-only: parsed each time, never shared.
    const more = plan({ actor: { kind: 'system', id: 'worker-a' }, runId: 'r-1' });
    expect(more).toEqual({ actor: { kind: 'system', id: 'worker-a' }, runId: 'r-1' });
    expect(more).not.toBe(plan({ actor: { kind: 'system', id: 'worker-a' }, runId: 'r-1' }));
    const extraActorKey = { actor: { kind: 'system', id: 'worker-a', name: 'x' } };
    expect(plan(extraActorKey)).not.toBe(plan(extraActorKey));
    // An event's own meta still wins over the append's, and bad actors are refused every time, not remembered.
    const own = planAppend(
      stream({ correlationId: 'c-2' }),
      { meta: { actor: { kind: 'system', id: 'worker-a' } } },
      deps,
    );
    expect(own.streams[0]!.events[0]!.meta).toEqual({
      actor: { kind: 'system', id: 'worker-a' },
      correlationId: 'c-2',
    });
    for (let i = 0; i < 2; i++) {
      expect(() => plan({ actor: { kind: 'robot', id: 'r' } })).toThrow(/meta/);
      expect(() => plan({ actor: { kind: 'system', id: '' } })).toThrow(/meta/);
    }
  });

  it('stamps every append with the clock time as ISO text', () => {
    let now = 1_700_000_000_000;
    const clock = { now: () => now };
    expect(planAppend(stream(), undefined, { ...deps, clock }).recordedAt).toBe('2023-11-14T22:13:20.000Z');
    now += 1;
    expect(planAppend(stream(), undefined, { ...deps, clock }).recordedAt).toBe('2023-11-14T22:13:20.001Z');
  });
});

describe('eventHashHex', () => {
  it('is eventHash as hex, chained from hex', () => {
    const row = {
      position: 1,
      event_id: 'evt_1',
      stream_type: 'note',
      stream_id: 'n-1',
      stream_version: 1,
      type: 'note.added',
      schema_version: 1,
      data: '{"text":"hi \\"there\\""}',
      meta: DEFAULT_META_JSON,
      recorded_at: '2023-11-14T22:13:20.000Z',
      idempotency_key: null,
    };
    const first = eventHash(GENESIS_HASH, row);
    expect(eventHashHex(GENESIS_HASH.toString('hex'), row)).toBe(first.toString('hex'));
    const second = { ...row, position: 2, stream_version: 2, idempotency_key: 'k' };
    expect(eventHashHex(first.toString('hex'), second)).toBe(eventHash(first, second).toString('hex'));
  });
});
