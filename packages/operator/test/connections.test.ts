import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { OperatorEvent } from '../src/index.js';
import { deferred, RUN, SESSION, TURN } from './fake-backend.js';
import { eventually, type Gateway, INIT, isEvent, isResponse, startGateway } from './harness.js';

const message = (text: string): OperatorEvent => ({
  event: 'operator.message',
  payload: { message_id: 'msg_1', session_id: SESSION, role: 'assistant', text, visibility: 'persist' },
});

describe('connections', () => {
  let gw: Gateway;
  afterEach(() => gw.dispose());

  it('pushes backend events only after initialize, after operator.ready', async () => {
    gw = await startGateway();
    const client = await gw.client();
    gw.events.next(message('too early'));
    await expect(client.request('operator.status')).rejects.toMatchObject({ code: 'protocol_mismatch' });
    await client.request('operator.initialize', INIT);
    gw.events.next(message('live'));
    await eventually(() => client.received.length === 2);
    expect(client.received).toEqual([expect.objectContaining({ event: 'operator.ready' }), message('live')]);
  });

  it('broadcasts to every initialized client and to no uninitialized one', async () => {
    gw = await startGateway();
    const [a, b] = [await gw.client(), await gw.client()];
    const stranger = await gw.raw();
    await a.request('operator.initialize', INIT);
    await b.request('operator.initialize', INIT);
    gw.events.next(message('to all'));
    await eventually(() => a.received.length === 2 && b.received.length === 2);
    expect(a.received[1]).toEqual(message('to all'));
    expect(b.received[1]).toEqual(message('to all'));
    expect(gw.server.connections).toBe(3);
    stranger.send(JSON.stringify({ id: 1, method: 'operator.nope' }));
    await stranger.take(isResponse(1));
    expect(stranger.frames).toEqual([]);
  });

  it('sends an operator.error instead of an invalid backend event, and reports it', async () => {
    gw = await startGateway();
    const client = await gw.client();
    await client.request('operator.initialize', INIT);
    gw.events.next({ event: 'operator.message', payload: { text: 'no ids' } } as never);
    await eventually(() => client.received.length === 2);
    expect(client.received[1]).toMatchObject({
      event: 'operator.error',
      payload: { code: 'internal', message: expect.stringContaining('invalid operator.message event') },
    });
    expect(gw.errors).toHaveLength(1);
  });

  it('never cancels anything when a client disconnects mid-request, and keeps serving', async () => {
    const held = deferred<unknown>();
    gw = await startGateway({ overrides: { submit: () => held.promise } });
    const raw = await gw.raw();
    raw.send(JSON.stringify({ id: 1, method: 'operator.initialize', params: INIT }));
    await raw.take(isResponse(1));
    raw.send(JSON.stringify({ id: 2, method: 'operator.submit', params: { text: 'long job' } }));
    await eventually(() => gw.calls.length === 1);
    raw.socket.destroy();
    gw.events.next(message('after the client left'));
    await new Promise((r) => setTimeout(r, 50));
    expect(gw.methodsCalled()).toEqual(['submit']);
    // The half-closed connection is kept until its pending answer is written (into the void).
    held.resolve({ session_id: SESSION, run_id: RUN, turn_id: TURN });
    await eventually(() => gw.server.connections === 0);

    const next = await gw.client();
    await next.request('operator.initialize', INIT);
    await expect(next.request('operator.status')).resolves.toBeDefined();
    expect(gw.methodsCalled()).toEqual(['submit', 'status']);
    expect(gw.errors).toEqual([]);
  });

  it('closing a client rejects its pending request and cancels nothing', async () => {
    gw = await startGateway({ overrides: { submit: () => new Promise(() => {}) } });
    const client = await gw.client();
    await client.request('operator.initialize', INIT);
    const pending = client.request('operator.submit', { text: 'x' });
    await eventually(() => gw.calls.length === 1);
    await client.close();
    await expect(pending).rejects.toMatchObject({ name: 'OperatorConnectionClosedError', code: 'connection_closed' });
    await expect(client.request('operator.status')).rejects.toMatchObject({ code: 'connection_closed' });
    expect(gw.methodsCalled()).toEqual(['submit']);
  });

  it('lets at most maxInFlight requests of a connection await the backend', async () => {
    const held = deferred<unknown>();
    gw = await startGateway({ limits: { maxInFlight: 2 }, overrides: { status: () => held.promise } });
    const client = await gw.client();
    await client.request('operator.initialize', INIT);
    const answers = Array.from({ length: 6 }, () => client.request('operator.status'));
    await eventually(() => gw.calls.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(gw.calls).toHaveLength(2);
    held.resolve('done');
    await expect(Promise.all(answers)).resolves.toEqual(Array(6).fill('done'));
  });

  it('disconnects a client that does not read its events', async () => {
    gw = await startGateway({ limits: { maxPendingWriteBytes: 64 * 1024 } });
    const raw = await gw.raw();
    raw.send(JSON.stringify({ id: 1, method: 'operator.initialize', params: INIT }));
    await raw.take(isEvent('operator.ready'));
    raw.socket.pause();
    const big = 'w'.repeat(16 * 1024);
    for (let i = 0; i < 2000 && gw.server.connections > 0; i++) {
      gw.events.next(message(big));
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => gw.server.connections === 0);
    expect(gw.errors).toEqual([expect.objectContaining({ message: expect.stringContaining('did not read') })]);
  });

  it('close() sends operator.shutdown to initialized clients, ends them and removes the socket', async () => {
    gw = await startGateway();
    const client = await gw.client();
    await client.request('operator.initialize', INIT);
    const idle = await gw.raw();
    await gw.server.close('host stopping');
    await client.closed;
    expect(client.received.at(-1)).toEqual({ event: 'operator.shutdown', payload: { reason: 'host stopping' } });
    await eventually(() => idle.socket.closed);
    expect(idle.frames).toEqual([]);
    expect(existsSync(gw.server.path)).toBe(false);
  });
});
