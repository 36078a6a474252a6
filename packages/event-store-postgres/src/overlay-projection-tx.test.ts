import { describe, expect, it } from 'vitest';
import { OverlayMiss, OverlayProjectionTx } from './overlay-projection-tx.js';

const miss = (work: () => unknown) => {
  try {
    work();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('OverlayProjectionTx', () => {
  it('asks for what it has not loaded, then answers from the loaded documents and its own writes', () => {
    const tx = new OverlayProjectionTx('p');
    tx.begin();
    expect(miss(() => tx.get('c', 'a'))).toEqual(new OverlayMiss('c', 'a'));
    tx.loaded('c', 'a', JSON.stringify({ n: 1 }));
    tx.loaded('c', 'gone', null);
    expect(tx.get('c', 'a')).toEqual({ n: 1 });
    expect(tx.get('c', 'gone')).toBeUndefined();
    tx.put('c', 'a', { n: 2 });
    expect(tx.get('c', 'a')).toEqual({ n: 2 });
    tx.keep();
    expect(tx.get('c', 'a')).toEqual({ n: 2 });
    expect(tx.dirty).toBe(true);
  });

  it('drops the writes of an event that missed, keeping those of earlier events', () => {
    const tx = new OverlayProjectionTx('p');
    tx.begin();
    tx.put('c', 'kept', 1);
    tx.keep();
    tx.begin();
    tx.put('c', 'dropped', 2);
    expect(miss(() => tx.get('c', 'unknown'))).toBeInstanceOf(OverlayMiss);
    tx.begin(); // the runner starts the event again after loading
    expect(tx.get('c', 'kept')).toBe(1);
    expect(miss(() => tx.get('c', 'dropped'))).toBeInstanceOf(OverlayMiss);
    expect([...tx.written.docs.get('c')!.keys()]).toEqual(['kept']);
  });

  it('lists a loaded collection with its writes, deletes and clears, in byte order with paging and prefixes', () => {
    const tx = new OverlayProjectionTx('p');
    tx.begin();
    expect(miss(() => tx.list('c'))).toEqual(new OverlayMiss('c', undefined));
    tx.loadedCollection('c', [
      { id: 'b1', doc: '"b1"' },
      { id: 'a1', doc: '"a1"' },
      { id: 'Z', doc: '"Z"' },
    ]);
    tx.put('c', 'b0', 'b0');
    tx.delete('c', 'a1');
    expect(tx.list('c')).toEqual(['Z', 'b0', 'b1']);
    expect(tx.list('c', { prefix: 'b', after: 'b0' })).toEqual(['b1']);
    expect(tx.list('c', { limit: 2 })).toEqual(['Z', 'b0']);
    expect(tx.get('c', 'never-there')).toBeUndefined(); // a loaded collection knows what it lacks
    tx.keep();
    tx.begin();
    tx.clear('c');
    tx.put('c', 'new', 'new');
    expect(tx.list('c')).toEqual(['new']);
    expect(miss(() => tx.list('other'))).toBeInstanceOf(OverlayMiss);
    tx.clear();
    expect(tx.list('other')).toEqual([]);
    expect(tx.get('c', 'new')).toBeUndefined();
    tx.keep();
    expect(tx.written.clearedAll).toBe(true);
  });
});
