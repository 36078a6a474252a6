import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  asDomainEvent,
  type DomainEvent,
  type DomainEventType,
  domainEvents,
  type EventOfType,
  findEvent,
  isEvent,
  newEvent,
  type RecordedEvent,
  systemActor,
} from './index.js';

const recorded = (type: string, data: unknown): RecordedEvent => ({
  position: 1,
  eventId: 'evt_01JD5Y7Q6N0000000000000000',
  streamType: 'run',
  streamId: 'run_01JD5Y7Q6N0000000000000000',
  streamVersion: 1,
  type,
  schemaVersion: 1,
  data,
  meta: { actor: systemActor },
  recordedAt: '2026-03-01T12:00:00.000Z',
});

describe('typed domain events', () => {
  it('the union covers exactly the registry: every registered type is a DomainEventType', () => {
    // A type in the registry but not in the union (or the reverse) fails to compile or this check.
    const types: readonly DomainEventType[] = domainEvents.types as DomainEventType[];
    expect(new Set(types).size).toBe(domainEvents.types.length);
    expectTypeOf<'run.started'>().toExtend<DomainEventType>();
    expectTypeOf<'not.an_event'>().not.toExtend<DomainEventType>();
    expectTypeOf<string>().not.toExtend<DomainEventType>();
  });

  it('switching on type narrows data to the schema of that type', () => {
    const e = asDomainEvent(
      recorded('run.owner_heartbeat', {
        runId: 'run_01JD5Y7Q6N0000000000000000',
        owner: 'host-1',
        leaseToken: 'tok',
        leaseUntil: '2026-03-01T12:00:30.000Z',
      }),
    );
    let token = '';
    switch (e.type) {
      case 'run.owner_heartbeat':
        expectTypeOf(e.data.leaseToken).toEqualTypeOf<string>();
        token = e.data.leaseToken;
        break;
      default:
        break;
    }
    expect(token).toBe('tok');
    expectTypeOf<Extract<DomainEvent, { type: 'run.queued' }>>().toEqualTypeOf<EventOfType<'run.queued'>>();
  });

  it('isEvent narrows by one or several types and refuses others', () => {
    const e = recorded('run.failed', {
      runId: 'run_01JD5Y7Q6N0000000000000000',
      error: { code: 'x', message: 'y' },
    });
    expect(isEvent(e, 'run.completed')).toBe(false);
    expect(isEvent(e, 'run.completed', 'run.failed')).toBe(true);
    if (isEvent(e, 'run.failed')) expectTypeOf(e.data.runId).toExtend<string>();
  });

  it('newEvent builds a new event whose data is checked against the schema input', () => {
    const e = newEvent('run.queued', {
      runId: 'run_01JD5Y7Q6N0000000000000000',
      sessionId: 'ses_01JD5Y7Q6N0000000000000000',
    });
    expect(e).toEqual({
      type: 'run.queued',
      data: { runId: 'run_01JD5Y7Q6N0000000000000000', sessionId: 'ses_01JD5Y7Q6N0000000000000000' },
    });
    expect(() => domainEvents.validate(e.type, e.data)).not.toThrow();
    // @ts-expect-error: run.queued has no `owner`, and `sessionId` is required
    newEvent('run.queued', { runId: 'run_01JD5Y7Q6N0000000000000000', owner: 'x' });
  });
});

describe('findEvent', () => {
  it('finds the first event of the given types, narrowed', () => {
    const events = [
      recorded('run.queued', { runId: 'run_01JD5Y7Q6N0000000000000000', sessionId: 'ses_01JD5Y7Q6N0000000000000000' }),
      recorded('run.failed', { runId: 'run_01JD5Y7Q6N0000000000000000', error: { code: 'x', message: 'y' } }),
    ];
    expect(findEvent(events, 'run.failed')?.data.error.code).toBe('x');
    expect(findEvent(events, 'run.completed')).toBeUndefined();
  });
});

describe('EventOfType over several types', () => {
  it('is a discriminated union: isEvent with several types narrows by type', () => {
    const e = recorded('run.failed', { runId: 'run_01JD5Y7Q6N0000000000000000', error: { code: 'x', message: 'y' } });
    if (isEvent(e, 'run.queued', 'run.failed')) {
      if (e.type === 'run.failed') expectTypeOf(e.data.error.code).toEqualTypeOf<string>();
      else expectTypeOf(e.data.sessionId).toExtend<string>();
    }
    expectTypeOf<EventOfType<'run.queued' | 'run.failed'>>().toEqualTypeOf<
      EventOfType<'run.queued'> | EventOfType<'run.failed'>
    >();
  });
});
