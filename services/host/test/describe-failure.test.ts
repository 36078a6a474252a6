import { BackgroundWorkRuntime } from '@demiurge/slots';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../src/index.js';

describe('describeFailure', () => {
  it('names what failed and why: the error type, its system code and message', () => {
    expect(describeFailure({ name: 'delivery', error: new TypeError('bad url') })).toBe('delivery: TypeError: bad url');
    const eperm = Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
    expect(describeFailure({ name: 'task tsk_1', error: eperm })).toBe('task tsk_1: Error (EPERM): kill EPERM');
    expect(describeFailure({ name: 'x', error: new Error('') })).toBe('x: Error: no message');
    expect(describeFailure({ name: 'x', error: 'just a string' })).toBe(
      'x: a non-error value was thrown: just a string',
    );
    expect(describeFailure({ name: 'x', error: undefined })).toBe('x: a non-error value was thrown: undefined');
  });

  it("gives a background rejection's name and error (the host's onError line, never 'undefined')", async () => {
    const lines: string[] = [];
    const background = new BackgroundWorkRuntime({ onError: (failure) => lines.push(describeFailure(failure)) });
    background
      .track('slot:output/audit_log session ses_1', Promise.reject(new Error('the store is closed')))
      .catch(() => undefined);
    await background.drain(1_000);
    expect(lines).toEqual(['slot:output/audit_log session ses_1: Error: the store is closed']);
  });
});
