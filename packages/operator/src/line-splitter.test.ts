import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.js';

function collect(max: number) {
  const out: Array<string | { oversized: number }> = [];
  const splitter = new LineSplitter(max, {
    line: (text) => out.push(text),
    oversized: (limit) => out.push({ oversized: limit }),
  });
  return { splitter, out, push: (text: string) => splitter.push(Buffer.from(text)) };
}

describe('LineSplitter', () => {
  it('splits lines across chunks, drops a trailing \\r, and flushes a last line without newline at end()', () => {
    const { splitter, out, push } = collect(100);
    push('ab');
    push('c\nde');
    push('f\r\ng\n\nh');
    expect(out).toEqual(['abc', 'def', 'g', '']);
    splitter.end();
    expect(out).toEqual(['abc', 'def', 'g', '', 'h']);
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const { splitter, out } = collect(100);
    const bytes = Buffer.from('héllo ✓\n');
    splitter.push(bytes.subarray(0, 2));
    splitter.push(bytes.subarray(2, 8));
    splitter.push(bytes.subarray(8));
    expect(out).toEqual(['héllo ✓']);
  });

  it('accepts a line of exactly the limit and reports a longer one once, then goes on', () => {
    const { out, push } = collect(4);
    push('1234\n12345\nok\n');
    expect(out).toEqual(['1234', { oversized: 4 }, 'ok']);
  });

  it('never holds more than the limit while discarding a long line arriving in pieces', () => {
    const { splitter, out, push } = collect(8);
    let peak = 0;
    for (let i = 0; i < 1000; i++) {
      push('xxx');
      peak = Math.max(peak, splitter.bufferedBytes);
    }
    push('tail\nnext\n');
    expect(peak).toBeLessThanOrEqual(8);
    expect(out).toEqual([{ oversized: 8 }, 'next']);
    expect(splitter.bufferedBytes).toBe(0);
  });

  it('drops an unfinished oversized line at end() without reporting it twice', () => {
    const { splitter, out, push } = collect(2);
    push('abcdef');
    splitter.end();
    expect(out).toEqual([{ oversized: 2 }]);
  });
});
