import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createEventRegistry,
  createIdGenerator,
  defineEvent,
  domainEvents,
  EventValidationError,
  idTime,
  isoTime,
  SessionId,
  UnknownEventTypeError,
} from './index.js';
import { createFakeClock, createSeededIdGenerator } from './testing/index.js';

describe('ids', () => {
  it('are prefixed, branded by schema, and sort in creation order within and across milliseconds', () => {
    const clock = createFakeClock(Date.parse('2026-03-01T12:00:00Z'));
    const ids = createIdGenerator(clock);
    const made: string[] = [];
    for (let i = 0; i < 300; i++) {
      if (i % 100 === 0) clock.advance(1);
      made.push(ids.next('ses'));
    }
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(300);
    expect(made[0]).toMatch(/^ses_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(SessionId.safeParse(made[0]).success).toBe(true);
    expect(SessionId.safeParse('tsk_01JD5Y7Q6N0000000000000000').success).toBe(false);
    expect(idTime(made[0]!)).toBe(Date.parse('2026-03-01T12:00:00.001Z'));
  });

  it('are reproducible from a seed', () => {
    const a = createSeededIdGenerator(createFakeClock(), 9);
    const b = createSeededIdGenerator(createFakeClock(), 9);
    expect([a.next('evt'), a.next('evt')]).toEqual([b.next('evt'), b.next('evt')]);
  });
});

describe('defineEvent', () => {
  it('builds a schema given as a function on first use, once, and validates with it', () => {
    let builds = 0;
    const Lit = defineEvent({
      type: 'lamp.lit',
      schemaVersion: 1,
      description: 'A lamp was lit.',
      data: () => {
        builds++;
        return z.object({ lumens: z.number().int().positive() });
      },
    });
    const registry = createEventRegistry([Lit]);
    expect(builds).toBe(0);
    expect(registry.validate('lamp.lit', { lumens: 800 })).toEqual({ data: { lumens: 800 }, schemaVersion: 1 });
    expect(() => registry.validate('lamp.lit', { lumens: -1 })).toThrow(EventValidationError);
    expect(Lit.data).toBe(registry.get('lamp.lit').data);
    expect(builds).toBe(1);
  });

  it("the catalog's schemas are functions, built on first use", () => {
    const built = domainEvents.definitions.filter((def) => {
      const descriptor = Object.getOwnPropertyDescriptor(def, 'data');
      return descriptor?.get === undefined;
    });
    // Only the event files whose schemas are still given directly (not as functions) are built at import.
    expect(built.map((def) => def.type.split('.')[0])).toEqual(
      expect.not.arrayContaining(['task', 'work', 'run', 'session', 'turn', 'delivery', 'tool_call']),
    );
  });
});

describe('event registry', () => {
  const Renamed = defineEvent({
    type: 'thing.renamed',
    schemaVersion: 3,
    description: 'v1 had `title`, v2 `name`, v3 `name` and `by`.',
    data: z.object({ name: z.string().min(1), by: z.string() }),
    upcasters: {
      1: (d) => ({ name: (d as { title: string }).title }),
      2: (d) => ({ ...(d as object), by: 'unknown' }),
    },
  });
  const registry = createEventRegistry([Renamed]);

  it('validates new data and names the failing path', () => {
    expect(registry.validate('thing.renamed', { name: 'a', by: 'me' })).toEqual({
      data: { name: 'a', by: 'me' },
      schemaVersion: 3,
    });
    const err = (() => {
      try {
        registry.validate('thing.renamed', { name: '', by: 'me' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(EventValidationError);
    expect(err).toMatchObject({ type: 'thing.renamed', path: ['name'], code: 'event_validation' });
    expect(() => registry.validate('thing.lost', {})).toThrow(UnknownEventTypeError);
  });

  it('upcasts old schema versions step by step, and refuses newer ones', () => {
    expect(registry.read('thing.renamed', 1, { title: 'old' })).toEqual({ name: 'old', by: 'unknown' });
    expect(() => registry.read('thing.renamed', 4, {})).toThrow(/newer than this code's 3/);
  });

  it('refuses duplicate types and names that are not dotted', () => {
    expect(() => createEventRegistry([Renamed, Renamed])).toThrow(/registered twice/);
    expect(() => defineEvent({ type: 'Renamed', schemaVersion: 1, description: '', data: z.object({}) })).toThrow(
      /dotted/,
    );
  });

  it('catalogs the domain events', () => {
    expect(domainEvents.types).toContain('session.created');
    expect(domainEvents.types).toContain('message.recorded');
  });
});

describe('generated event catalog', () => {
  it('docs/events.md matches the schemas (run `pnpm docs:generate` to regenerate)', async () => {
    const { readFileSync } = await import('node:fs');
    const { renderEventCatalog } = await import('./index.js');
    const file = new URL('../../../docs/events.md', import.meta.url);
    expect(readFileSync(file, 'utf8')).toBe(renderEventCatalog(domainEvents));
  });
});

describe('isoTime', () => {
  it('is toISOString of the millisecond, whether or not it was the last one asked', () => {
    for (const ms of [0, 1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001, -1, 0]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(isoTime(5)).toBe('1970-01-01T00:00:00.005Z');
  });
});
