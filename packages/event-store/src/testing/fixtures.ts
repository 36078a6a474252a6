import { createEventRegistry, defineEvent, type EventRegistry } from '@demiurge/contracts';
import { z } from 'zod';
import { defineProjector } from '../projector.js';

/** Event types the conformance suite appends: independent of the domain catalog. */
export const TestCreated = defineEvent({
  type: 'test.created',
  schemaVersion: 1,
  description: 'A test stream began.',
  data: z.object({ name: z.string().min(1) }),
});
export const TestIncremented = defineEvent({
  type: 'test.incremented',
  schemaVersion: 2,
  description: 'A counter moved; version 1 called the amount `n`.',
  data: z.object({ by: z.number().int() }),
  upcasters: { 1: (data) => ({ by: (data as { n: number }).n }) },
});
export const TestNoted = defineEvent({
  type: 'test.noted',
  schemaVersion: 1,
  description: 'Free text; the poison projector refuses the text "poison".',
  data: z.object({ text: z.string() }),
});

export const testEventRegistry: EventRegistry = createEventRegistry([TestCreated, TestIncremented, TestNoted]);

/** Totals per stream and overall: a read-modify-write projector, the kind rebuilds must reproduce. */
export const counterProjector = defineProjector({
  name: 'counter',
  version: 1,
  handles: ['test.created', 'test.incremented'],
  apply(event, tx) {
    if (event.type === 'test.created') {
      tx.put('streams', event.streamId, { name: (event.data as { name: string }).name, total: 0, events: 1 });
      return;
    }
    const by = (event.data as { by: number }).by;
    const stream = tx.get<{ name: string; total: number; events: number }>('streams', event.streamId) ?? {
      name: '?',
      total: 0,
      events: 0,
    };
    tx.put('streams', event.streamId, { ...stream, total: stream.total + by, events: stream.events + 1 });
    const all = tx.get<number>('totals', 'all') ?? 0;
    tx.put('totals', 'all', all + by);
  },
});

/** Keeps the last note of each stream, and deletes it on an empty note. */
export const notesProjector = defineProjector({
  name: 'notes',
  version: 1,
  handles: ['test.noted'],
  apply(event, tx) {
    const text = (event.data as { text: string }).text;
    if (text === '') tx.delete('last', event.streamId);
    else tx.put('last', event.streamId, { text, position: event.position });
  },
});

/** Throws on the note "poison": an append carrying it must fail whole. */
export const poisonProjector = defineProjector({
  name: 'poison',
  version: 1,
  handles: ['test.noted'],
  apply(event, tx) {
    if ((event.data as { text: string }).text === 'poison') throw new Error('poisoned note');
    tx.put('seen', String(event.position).padStart(12, '0'), event.streamId);
  },
});
