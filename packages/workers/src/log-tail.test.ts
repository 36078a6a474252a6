import { describe, expect, it } from 'vitest';
import { LogTail, TRUNCATION_MARK } from './log-tail.js';

describe('LogTail', () => {
  it('splits chunks into lines across chunk boundaries, UTF-8 included', () => {
    const tail = new LogTail({ lines: 5 });
    const euro = Buffer.from('€');
    tail.push('stdout', Buffer.concat([Buffer.from('a\r\nb'), euro.subarray(0, 1)]));
    tail.push('stdout', Buffer.concat([euro.subarray(1), Buffer.from('\nrest')]));
    tail.push('stderr', Buffer.from('err\n'));
    expect(tail.take()).toEqual([
      { stream: 'stdout', text: 'a' },
      { stream: 'stdout', text: 'b€' },
      { stream: 'stderr', text: 'err' },
    ]);
    expect(tail.take()).toEqual([]);
    tail.end();
    expect(tail.take()).toEqual([{ stream: 'stdout', text: 'rest' }]);
    expect(tail.truncated).toBe(false);
  });

  it('keeps the newest lines of a batch and says how many it dropped', () => {
    const tail = new LogTail({ lines: 3 });
    tail.push('stdout', Buffer.from(`${Array.from({ length: 10 }, (_, i) => `l${i}`).join('\n')}\n`));
    expect(tail.take()).toEqual([
      { stream: 'progress', text: `${TRUNCATION_MARK}: 7 lines omitted; the full output is in the task's artifacts]` },
      { stream: 'stdout', text: 'l7' },
      { stream: 'stdout', text: 'l8' },
      { stream: 'stdout', text: 'l9' },
    ]);
    expect({ lines: tail.lines, omitted: tail.omitted, truncated: tail.truncated }).toEqual({
      lines: 10,
      omitted: 7,
      truncated: true,
    });
  });

  it('cuts long lines, also one that never ends, without holding more than the limit', () => {
    const tail = new LogTail({ lines: 5, maxLineChars: 8 });
    tail.push('stdout', Buffer.from('0123456789abcdef'));
    tail.push('stdout', Buffer.from('x'.repeat(100_000)));
    tail.push('stdout', Buffer.from('\nshort\n'));
    expect(tail.take()).toEqual([
      { stream: 'stdout', text: '01234567 […cut]' },
      { stream: 'stdout', text: 'short' },
    ]);
    expect(tail.cut).toBe(1);
  });
});
