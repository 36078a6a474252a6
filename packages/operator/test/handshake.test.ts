import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OperatorRequestError, PROTOCOL_VERSION } from '../src/index.js';
import { SESSION } from './fake-backend.js';
import { type Gateway, INIT, isEvent, isResponse, startGateway } from './harness.js';

describe('operator.initialize', () => {
  let gw: Gateway;
  beforeEach(async () => {
    gw = await startGateway({ version: '9.9.9' });
  });
  afterEach(() => gw.dispose());

  it('answers with the protocol version and server, then sends operator.ready', async () => {
    const raw = await gw.raw();
    raw.send(JSON.stringify({ id: 'init', method: 'operator.initialize', params: INIT }));
    const response = await raw.take(isResponse('init'));
    expect(response).toEqual({
      id: 'init',
      result: { protocol_version: PROTOCOL_VERSION, server: { name: 'demiurge', version: '9.9.9' } },
    });
    const ready = await raw.take(isEvent('operator.ready'));
    expect(ready.payload).toEqual({ protocol_version: 1, server: { name: 'demiurge', version: '9.9.9' } });
    expect(raw.frames).toEqual([]);
  });

  it('attaches a session: the result carries its status and operator.ready names it', async () => {
    const client = await gw.client();
    const result = await client.request('operator.initialize', { ...INIT, session_id: SESSION });
    expect(result.session).toEqual({ sessions: 1, state: 'idle' });
    expect(gw.calls).toEqual([{ method: 'status', params: { session_id: SESSION } }]);
    await expect
      .poll(() => client.received[0])
      .toMatchObject({ event: 'operator.ready', payload: { session_id: SESSION } });
  });

  it('refuses another protocol version with protocol_mismatch, and accepts version 1 afterwards', async () => {
    const client = await gw.client();
    const refused = client.request('operator.initialize', {
      protocol_version: 2,
      client: INIT.client,
      future: true,
    } as never);
    await expect(refused).rejects.toMatchObject({
      code: 'protocol_mismatch',
      message: expect.stringMatching(/version 1.*asked for 2/),
    });
    await expect(client.request('operator.submit', { text: 'hi' })).rejects.toMatchObject({
      code: 'protocol_mismatch',
    });
    await expect(client.request('operator.initialize', INIT)).resolves.toMatchObject({ protocol_version: 1 });
    expect(client.received.map((e) => e.event)).toEqual(['operator.ready']);
  });

  it('answers any method before initialize with protocol_mismatch and calls nothing', async () => {
    const client = await gw.client();
    for (const method of ['operator.submit', 'operator.status', 'operator.cancel', 'operator.nope']) {
      const error = await client.request(method, { text: 'x' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperatorRequestError);
      expect(error).toMatchObject({
        code: 'protocol_mismatch',
        method,
        message: expect.stringContaining('initialize'),
      });
    }
    expect(gw.calls).toEqual([]);
  });

  it('a request refused before initialize does not undo an initialize pipelined behind it', async () => {
    const raw = await gw.raw();
    raw.send(
      `${JSON.stringify({ id: 'early', method: 'operator.status' })}\n${JSON.stringify({ id: 'init', method: 'operator.initialize', params: INIT })}`,
    );
    expect(await raw.take(isResponse('early'))).toMatchObject({ error: { code: 'protocol_mismatch' } });
    expect(await raw.take(isResponse('init'))).toMatchObject({ result: { protocol_version: PROTOCOL_VERSION } });
    await raw.take(isEvent('operator.ready'));
    raw.send(JSON.stringify({ id: 'after', method: 'operator.status' }));
    expect(await raw.take(isResponse('after'))).toMatchObject({ result: { sessions: 1 } });
  });

  it('refuses a second initialize on the same connection', async () => {
    const client = await gw.client();
    await client.request('operator.initialize', INIT);
    await expect(client.request('operator.initialize', INIT)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('names the field of invalid initialize params', async () => {
    const client = await gw.client();
    await expect(
      client.request('operator.initialize', { protocol_version: 1, client: { name: 'tui' } } as never),
    ).rejects.toMatchObject({ code: 'invalid_params', field: 'client.version' });
  });

  it('holds requests pipelined behind initialize until it is answered', async () => {
    const raw = await gw.raw();
    raw.send(
      `${JSON.stringify({ id: 1, method: 'operator.initialize', params: INIT })}\n${JSON.stringify({
        id: 2,
        method: 'operator.submit',
        params: { text: 'hello' },
      })}`,
    );
    expect(await raw.take(isResponse(2))).toMatchObject({ result: { session_id: SESSION } });
  });
});
