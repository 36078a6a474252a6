import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OperatorClient } from '../src/index.js';
import { type BackendMethod, fakeId, RUN, SESSION, TURN } from './fake-backend.js';
import { type Gateway, INIT, startGateway } from './harness.js';

class SessionBusy extends DemiurgeError {
  override readonly name = 'SessionBusy';
  readonly code = ErrorCode.SessionBusy;
}

const APPROVAL = fakeId('apr');
const TASK = fakeId('tsk');

describe('operator methods', () => {
  let gw: Gateway;
  let client: OperatorClient;
  beforeEach(async () => {
    gw = await startGateway({
      overrides: {
        history: async () => {
          throw new SessionBusy('session ses_x is busy');
        },
        shutdown: async () => {
          throw new Error('disk on fire');
        },
        interrupt: async () => ({ ok: true, at: 10n }),
        replyPrompt: async () => undefined,
      },
    });
    client = await gw.client();
    await client.request('operator.initialize', INIT);
  });
  afterEach(() => gw.dispose());

  const routed: Array<[string, Record<string, unknown>, BackendMethod, unknown]> = [
    [
      'operator.submit',
      { text: 'hello', session_id: SESSION, plan: true },
      'submit',
      { session_id: SESSION, run_id: RUN, turn_id: TURN },
    ],
    ['operator.reply_prompt', { prompt_id: 'prm-1', text: '' }, 'replyPrompt', null],
    [
      'operator.reply_approval',
      { approval_id: APPROVAL, decision: 'grant', note: 'fine' },
      'replyApproval',
      { ok: true },
    ],
    ['operator.cancel', { task_id: TASK, session_id: SESSION, reason: 'not needed' }, 'cancel', { ok: true }],
    ['operator.status', {}, 'status', { sessions: 1, state: 'idle' }],
  ];
  it.each(routed)(
    'routes %s to the backend with its validated params',
    async (method, params, backendMethod, result) => {
      await expect(client.request(method, params)).resolves.toEqual(result);
      expect(gw.calls).toEqual([{ method: backendMethod, params }]);
    },
  );

  it('accepts omitted params where every param is optional', async () => {
    await expect(client.request('operator.status')).resolves.toEqual({ sessions: 1, state: 'idle' });
    expect(gw.calls).toEqual([{ method: 'status', params: {} }]);
  });

  const invalid: Array<[string, unknown, string | undefined]> = [
    ['operator.submit', { text: 3 }, 'text'],
    ['operator.submit', { text: '' }, 'text'],
    ['operator.submit', { text: 'x', sessionId: SESSION }, 'sessionId'],
    ['operator.submit', { text: 'x', session_id: 'session-1' }, 'session_id'],
    ['operator.reply_approval', { approval_id: APPROVAL, decision: 'maybe' }, 'decision'],
    ['operator.interrupt', {}, 'session_id'],
    ['operator.history', { session_id: SESSION, limit: 0 }, 'limit'],
    ['operator.cancel', { reason: 'why' }, undefined],
    ['operator.status', [1, 2], undefined],
  ];
  it.each(invalid)(
    'answers %s %j with invalid_params naming the field (%s), calling nothing',
    async (method, params, field) => {
      const error = await client.request(method, params).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid_params', message: expect.stringContaining(method) });
      if (field !== undefined) {
        expect(error).toMatchObject({ field, message: expect.stringContaining(`params.${field}`) });
      } else {
        expect((error as Error).message).toMatch(/run_id|object/);
      }
      expect(gw.calls).toEqual([]);
    },
  );

  it('answers an unknown method with unknown_method', async () => {
    await expect(client.request('operator.teleport', {})).rejects.toMatchObject({
      code: 'unknown_method',
      message: 'unknown method operator.teleport',
    });
  });

  it("passes a backend DemiurgeError's code and message through", async () => {
    await expect(client.request('operator.history', { session_id: SESSION, limit: 5 })).rejects.toMatchObject({
      code: 'session_busy',
      message: 'session ses_x is busy',
    });
    expect(gw.errors).toEqual([]);
  });

  it('answers any other backend failure as internal with its message, and reports it to onError', async () => {
    await expect(client.request('operator.shutdown', { reason: 'bye' })).rejects.toMatchObject({
      code: 'internal',
      message: 'disk on fire',
    });
    expect(gw.errors).toEqual([expect.objectContaining({ message: 'disk on fire' })]);
    await expect(client.request('operator.status')).resolves.toBeDefined();
  });

  it('answers a result that is not JSON as internal, and keeps working', async () => {
    await expect(client.request('operator.interrupt', { session_id: SESSION })).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringMatching(/BigInt/),
    });
    expect(gw.calls).toEqual([{ method: 'interrupt', params: { session_id: SESSION } }]);
    await expect(client.request('operator.status')).resolves.toBeDefined();
  });
});
