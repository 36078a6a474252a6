import { describe, expect, it } from 'vitest';
import { DocumentOverlay } from './document-overlay.js';
import type { DocumentStatements } from './sqlite-projection-tx.js';

function recording() {
  const calls: string[] = [];
  const hot = {
    put: { run: (p: string, c: string, id: string, doc: string) => calls.push(`put ${p}/${c}/${id}=${doc}`) },
    delete: { run: (p: string, c: string, id: string) => calls.push(`delete ${p}/${c}/${id}`) },
  } as unknown as DocumentStatements;
  return { calls, overlay: new DocumentOverlay(hot) };
}

describe('DocumentOverlay', () => {
  it('writes a document written many times in a batch once, with its last value', () => {
    const { calls, overlay } = recording();
    overlay.begin();
    for (let i = 1; i <= 8; i++) {
      overlay.mark();
      overlay.write('p', 'counts', 'claimed', String(i));
    }
    overlay.write('p', 'running', 'w1', '{}');
    overlay.write('p', 'running', 'w1', null);
    expect(overlay.read('p', 'counts', 'claimed')).toBe('8');
    expect(overlay.read('p', 'running', 'w1')).toBeNull();
    expect(overlay.read('p', 'counts', 'queued')).toBeUndefined();
    overlay.flush();
    expect(calls).toEqual(['put p/counts/claimed=8', 'delete p/running/w1']);
  });

  it('a rollback to the mark restores what earlier appends held, including what a flush wrote since', () => {
    const { calls, overlay } = recording();
    overlay.begin();
    overlay.mark();
    overlay.write('p', 'c', 'x', '1');
    overlay.write('p', 'c', 'w', '0');
    overlay.mark();
    overlay.write('p', 'c', 'x', '2');
    overlay.write('p', 'c', 'y', '3');
    overlay.flush(); // inside the second append's savepoint
    overlay.write('p', 'c', 'z', '4');
    overlay.rollbackToMark();
    expect(overlay.read('p', 'c', 'x')).toBe('1');
    expect(overlay.read('p', 'c', 'y')).toBeUndefined();
    expect(overlay.read('p', 'c', 'z')).toBeUndefined();
    expect(overlay.read('p', 'c', 'w')).toBe('0');
    calls.length = 0;
    overlay.flush();
    expect(calls.sort()).toEqual(['put p/c/w=0', 'put p/c/x=1']);
  });

  it('holds nothing once the transaction ended', () => {
    const { calls, overlay } = recording();
    overlay.begin();
    overlay.write('p', 'c', 'x', '1');
    overlay.end();
    expect(overlay.isActive).toBe(false);
    expect(overlay.read('p', 'c', 'x')).toBeUndefined();
    overlay.flush();
    expect(calls).toEqual([]);
  });
});
