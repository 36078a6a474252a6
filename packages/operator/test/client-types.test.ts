import { describe, expectTypeOf, it } from 'vitest';
import type { Ack, HistoryResult, InitializeResult, OperatorClient, StatusResult, SubmitResult } from '../src/index.js';

describe('OperatorClient.request types', () => {
  it('types the params and result of protocol methods and leaves other names open', () => {
    const request = (() => Promise.resolve()) as unknown as OperatorClient['request'];
    const run = () => {
      expectTypeOf(request('operator.submit', { text: 'hi' })).resolves.toEqualTypeOf<SubmitResult>();
      expectTypeOf(
        request('operator.initialize', { protocol_version: 1, client: { name: 'a', version: '1' } }),
      ).resolves.toEqualTypeOf<InitializeResult>();
      expectTypeOf(request('operator.status')).resolves.toEqualTypeOf<StatusResult>();
      expectTypeOf(request('operator.history', { session_id: 'ses_x' })).resolves.toEqualTypeOf<HistoryResult>();
      expectTypeOf(request('operator.cancel', { run_id: 'run_x' })).resolves.toEqualTypeOf<Ack>();
      expectTypeOf(request('operator.whatever', 42)).resolves.toBeUnknown();
      // @ts-expect-error interrupt needs its session_id
      void request('operator.interrupt');
      // @ts-expect-error text must be a string
      void request('operator.submit', { text: 3 });
    };
    expectTypeOf(run).toBeFunction();
  });
});
