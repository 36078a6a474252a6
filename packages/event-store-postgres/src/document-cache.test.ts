import { describe, expect, it } from 'vitest';
import { DocumentCache } from './document-cache.js';

const seen = (docs: [string, string, string, string | null][], complete = true) => ({ documents: docs, complete });

describe('DocumentCache', () => {
  it('answers only while the head and its last writer are the ones its last commit left', () => {
    const cache = new DocumentCache();
    cache.committed(
      { position: 7, xid: '100' },
      seen([
        ['p', 'c', 'a', '1'],
        ['p', 'c', 'gone', null],
      ]),
    );
    expect(cache.validate(7, '100')).toBe(true);
    expect(cache.lookup('p', 'c', 'a')).toBe('1');
    expect(cache.lookup('p', 'c', 'gone')).toBeNull();
    expect(cache.lookup('p', 'c', 'unknown')).toBeUndefined();
    // Another writer (a rebuild: same head, another transaction id) empties it.
    expect(cache.validate(7, '101')).toBe(false);
    expect(cache.lookup('p', 'c', 'a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('is emptied by another append (the head moved) and by a commit whose projector cleared collections', () => {
    const cache = new DocumentCache();
    cache.committed({ position: 3, xid: '9' }, seen([['p', 'c', 'a', '1']]));
    expect(cache.validate(4, '9')).toBe(false);
    cache.committed({ position: 4, xid: '10' }, seen([['p', 'c', 'a', '2']]));
    cache.committed({ position: 5, xid: '11' }, seen([], false));
    expect(cache.validate(5, '11')).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('keeps at most max documents, dropping the least recently used', () => {
    const cache = new DocumentCache(2);
    cache.committed(
      { position: 1, xid: '1' },
      seen([
        ['p', 'c', 'a', '1'],
        ['p', 'c', 'b', '2'],
      ]),
    );
    // The next transaction reads a and writes d: its commit makes both the most recently used.
    expect(cache.lookup('p', 'c', 'a')).toBe('1');
    cache.committed(
      { position: 2, xid: '2' },
      seen([
        ['p', 'c', 'a', '1'],
        ['p', 'c', 'd', '4'],
      ]),
    );
    expect(cache.size).toBe(2);
    expect(cache.lookup('p', 'c', 'b')).toBeUndefined();
    expect(cache.lookup('p', 'c', 'a')).toBe('1');
    expect(cache.lookup('p', 'c', 'd')).toBe('4');
  });
});
