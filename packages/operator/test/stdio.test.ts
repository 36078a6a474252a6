import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { serveStdio } from '../src/index.js';
import { deferred, fakeBackend, RUN, SESSION, TURN } from './fake-backend.js';
import { INIT } from './harness.js';

function stdio(overrides: Parameters<typeof fakeBackend>[0] = {}, afterInput?: () => Promise<void>) {
  const input = new PassThrough();
  const output = new PassThrough();
  const fake = fakeBackend(overrides);
  const frames: Array<Record<string, unknown>> = [];
  let rest = '';
  output.setEncoding('utf8');
  output.on('data', (text: string) => {
    rest += text;
    for (let i = rest.indexOf('\n'); i !== -1; i = rest.indexOf('\n')) {
      frames.push(JSON.parse(rest.slice(0, i)));
      rest = rest.slice(i + 1);
    }
  });
  const server = serveStdio({
    input,
    output,
    backend: fake.backend,
    version: '1.2.3',
    ...(afterInput ? { afterInput } : {}),
  });
  const send = (frame: unknown) => input.write(`${JSON.stringify(frame)}\n`);
  return { input, output, frames, server, send, ...fake };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('serveStdio', () => {
  it('speaks the protocol over a pair of streams and finishes when the input ends', async () => {
    const held = deferred<unknown>();
    const s = stdio({ submit: () => held.promise });
    s.send({ id: 1, method: 'operator.initialize', params: INIT });
    await settle();
    s.events.next({ event: 'operator.status', payload: { subject: 'host', state: 'idle' } });
    s.send({ id: 2, method: 'operator.submit', params: { text: 'hi' } });
    s.input.end();
    await settle();
    held.resolve({ session_id: SESSION, run_id: RUN, turn_id: TURN });
    await s.server.closed;
    expect(s.frames).toEqual([
      { id: 1, result: { protocol_version: 1, server: { name: 'demiurge', version: '1.2.3' } } },
      { event: 'operator.ready', payload: { protocol_version: 1, server: { name: 'demiurge', version: '1.2.3' } } },
      { event: 'operator.status', payload: { subject: 'host', state: 'idle' } },
      { id: 2, result: { session_id: SESSION, run_id: RUN, turn_id: TURN } },
    ]);
    expect(s.output.writableEnded).toBe(false);
    expect(s.methodsCalled()).toEqual(['submit']);
  });

  it('after the input ended and every request was answered, events flow until afterInput settles', async () => {
    const lingering = deferred<void>();
    const s = stdio({}, () => lingering.promise);
    s.send({ id: 1, method: 'operator.initialize', params: INIT });
    s.input.end();
    await settle();
    let closed = false;
    void s.server.closed.then(() => {
      closed = true;
    });
    s.events.next({ event: 'operator.status', payload: { subject: 'host', state: 'busy' } });
    await settle();
    expect(closed).toBe(false);
    lingering.resolve();
    await s.server.closed;
    s.events.next({ event: 'operator.status', payload: { subject: 'host', state: 'idle' } });
    await settle();
    expect(s.frames.map((f) => f.id ?? f.event)).toEqual([1, 'operator.ready', 'operator.status']);
  });

  it('close() does not wait for afterInput', async () => {
    const s = stdio({}, () => new Promise<void>(() => undefined));
    s.send({ id: 1, method: 'operator.initialize', params: INIT });
    s.input.end();
    await settle();
    await s.server.close('stopping');
    expect(s.frames.at(-1)).toEqual({ event: 'operator.shutdown', payload: { reason: 'stopping' } });
  });

  it('reports hostile lines as operator.error and keeps serving', async () => {
    const s = stdio();
    s.input.write('not json\n');
    s.input.write(`${'x'.repeat(1024 * 1024 + 1)}\n`);
    s.send({ id: 'a', method: 'operator.status' });
    await settle();
    expect(s.frames.map((f) => (f.payload as { code?: string } | undefined)?.code ?? f.error)).toEqual([
      'parse_error',
      'line_too_long',
      expect.objectContaining({ code: 'protocol_mismatch' }),
    ]);
    await s.server.close();
  });

  it('close() sends operator.shutdown to an initialized client and stops reading', async () => {
    const s = stdio();
    s.send({ id: 1, method: 'operator.initialize', params: INIT });
    await settle();
    await s.server.close('bye');
    expect(s.frames.at(-1)).toEqual({ event: 'operator.shutdown', payload: { reason: 'bye' } });
    s.events.next({ event: 'operator.status', payload: { subject: 'host', state: 'idle' } });
    s.send({ id: 2, method: 'operator.status' });
    await settle();
    expect(s.frames.at(-1)).toEqual({ event: 'operator.shutdown', payload: { reason: 'bye' } });
    expect(s.calls).toEqual([]);
  });
});
