import { describe, expect, it } from 'vitest';
import { ProjectorFailedError, UnknownProjectorError } from '../errors.js';
import { defineProjector } from '../projector.js';
import type { ConformanceContext } from './conformance.js';
import { counterProjector, notesProjector, poisonProjector } from './fixtures.js';

const note = (streamId: string, text: string) => ({
  streamType: 'note',
  streamId,
  expectedVersion: 'any' as const,
  events: [{ type: 'test.noted', data: { text } }],
});

export function defineProjectionConformance(ctx: ConformanceContext): void {
  describe('inline projections', () => {
    it('applies handled events in the append transaction and checkpoints the head', async () => {
      const { store } = await ctx.open();
      await store.append({
        streamType: 'counter',
        streamId: 'a',
        expectedVersion: 'no_stream',
        events: [
          { type: 'test.created', data: { name: 'A' } },
          { type: 'test.incremented', data: { by: 5 } },
        ],
      });
      await store.append(note('n1', 'hello'));
      await store.append(note('n2', 'there'));
      await store.append(note('n1', ''));
      const counter = store.projection('counter');
      expect(await counter.get('streams', 'a')).toEqual({ name: 'A', total: 5, events: 2 });
      expect(await counter.get('totals', 'all')).toBe(5);
      expect(await counter.checkpoint()).toEqual({ name: 'counter', version: 1, position: 5 });
      expect(await store.projection('notes').list('last')).toEqual([{ text: 'there', position: 4 }]);
      expect(await store.projection('notes').dump()).toEqual({ last: { n2: { text: 'there', position: 4 } } });
      expect(await counter.counts()).toEqual({ streams: 1, totals: 1 });
      expect(await store.projection('notes').counts()).toEqual({ last: 1 });
      expect(store.projectorNames).toEqual(['counter', 'notes']);
      expect(() => store.projection('nope')).toThrow(UnknownProjectorError);
    });

    it('lists documents in id order with paging and prefixes', async () => {
      const { store } = await ctx.open();
      for (const id of ['b2', 'a1', 'b1', 'c1'])
        await store.append({
          streamType: 'counter',
          streamId: id,
          expectedVersion: 'no_stream',
          events: [{ type: 'test.created', data: { name: id } }],
        });
      const reader = store.projection('counter');
      const names = async (o: Parameters<typeof reader.list>[1]) =>
        (await reader.list<{ name: string }>('streams', o)).map((d) => d.name);
      expect(await names({})).toEqual(['a1', 'b1', 'b2', 'c1']);
      expect(await names({ after: 'a1', limit: 2 })).toEqual(['b1', 'b2']);
      expect(await names({ prefix: 'b' })).toEqual(['b1', 'b2']);
      expect(await reader.entries('streams', { after: 'b1' })).toEqual([
        { id: 'b2', doc: { name: 'b2', total: 0, events: 1 } },
        { id: 'c1', doc: { name: 'c1', total: 0, events: 1 } },
      ]);
    });

    it('rolls the whole append back when a projector throws', async () => {
      const { store } = await ctx.open([notesProjector, poisonProjector]);
      await store.append(note('n1', 'fine'));
      const err = await store.append([note('n2', 'also fine'), note('n3', 'poison')]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProjectorFailedError);
      expect(err).toMatchObject({ projector: 'poison', eventType: 'test.noted', position: 3 });
      expect(await store.head()).toBe(1);
      expect(await store.projection('notes').get('last', 'n2')).toBeUndefined();
      await store.append(note('n4', 'after'));
      expect(await store.head()).toBe(2);
      expect(Object.keys((await store.projection('poison').dump()).seen ?? {})).toEqual([
        '000000000001',
        '000000000002',
      ]);
    });

    it('rebuilds projections from the log equal to their live state, reporting progress', async () => {
      const { store } = await ctx.open();
      for (let i = 0; i < 30; i++) {
        await store.append({
          streamType: 'counter',
          streamId: `s${i % 4}`,
          expectedVersion: 'any',
          events: [{ type: 'test.incremented', data: { by: i } }],
        });
        if (i % 3 === 0) await store.append(note(`n${i % 5}`, i % 2 ? '' : `note ${i}`));
      }
      const live = { counter: await store.projection('counter').dump(), notes: await store.projection('notes').dump() };
      const progress: number[] = [];
      const report = await store.rebuild({ batchSize: 7, onProgress: (p) => progress.push(p.position) });
      expect(report.projectors.map((p) => p.position)).toEqual([40, 40]);
      expect(progress.at(-1)).toBe(40);
      expect({
        counter: await store.projection('counter').dump(),
        notes: await store.projection('notes').dump(),
      }).toEqual(live);
      await store.rebuild({ projectors: ['notes'] });
      expect(await store.projection('notes').dump()).toEqual(live.notes);
      await expect(store.rebuild({ projectors: ['nope'] })).rejects.toBeInstanceOf(UnknownProjectorError);
    });

    it('rebuilds a projector whose version changed when the store opens, and adds a new one', async () => {
      const { store, reopen } = await ctx.open([counterProjector]);
      await store.append({
        streamType: 'counter',
        streamId: 'a',
        expectedVersion: 'no_stream',
        events: [
          { type: 'test.created', data: { name: 'a' } },
          { type: 'test.incremented', data: { by: 2 } },
        ],
      });
      await store.append(note('n', 'kept'));
      const doubled = defineProjector({
        ...counterProjector,
        version: 2,
        apply: (event, tx) => {
          if (event.type !== 'test.incremented') return;
          tx.put(
            'doubled',
            event.streamId,
            ((tx.get<number>('doubled', event.streamId) ?? 0) + (event.data as { by: number }).by) * 1 * 2,
          );
        },
      });
      const reopened = await reopen([doubled, notesProjector]);
      expect(await reopened.projection('counter').dump()).toEqual({ doubled: { a: 4 } });
      expect(await reopened.projection('counter').checkpoint()).toEqual({ name: 'counter', version: 2, position: 3 });
      expect(await reopened.projection('notes').get('last', 'n')).toEqual({ text: 'kept', position: 3 });
      expect(await reopened.readStream('a')).toHaveLength(2);
    });
  });
}
