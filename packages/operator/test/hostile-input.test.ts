import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SESSION } from './fake-backend.js';
import { type Gateway, INIT, isEvent, isResponse, type RawClient, startGateway } from './harness.js';

const MiB = 1024 * 1024;

describe('hostile input', () => {
  let gw: Gateway;
  let raw: RawClient;
  beforeEach(async () => {
    gw = await startGateway();
    raw = await gw.raw();
    raw.send(JSON.stringify({ id: 0, method: 'operator.initialize', params: INIT }));
    await raw.take(isResponse(0));
    await raw.take(isEvent('operator.ready'));
  });
  afterEach(() => gw.dispose());

  async function stillAnswers(id: number): Promise<void> {
    raw.send(JSON.stringify({ id, method: 'operator.submit', params: { text: 'still there?', session_id: SESSION } }));
    expect(await raw.take(isResponse(id))).toMatchObject({ result: { session_id: SESSION } });
  }

  it.each([
    ['a malformed line', '{"id": 1, "method": ', 'parse_error'],
    ['a non-object', '[1,2,3]', 'invalid_request'],
    ['a bare string', '"operator.status"', 'invalid_request'],
    ['a request without an id', '{"method":"operator.status"}', 'invalid_request'],
    ['a request with an object id', '{"id":{},"method":"operator.status"}', 'invalid_request'],
  ])('answers %s with an operator.error event and keeps working', async (_name, line, code) => {
    raw.send(line);
    const error = await raw.take(isEvent('operator.error'));
    expect(error.payload).toMatchObject({ code });
    await stillAnswers(1);
  });

  it('answers with an error response when the id is readable', async () => {
    raw.send('{"id":"a","method":42}');
    expect(await raw.take(isResponse('a'))).toMatchObject({ error: { code: 'invalid_request' } });
    raw.send('{"id":"b","method":"operator.status","params":"all"}');
    expect(await raw.take(isResponse('b'))).toMatchObject({ error: { code: 'invalid_params' } });
    raw.send('{"id":"c","method":"operator.nope"}');
    expect(await raw.take(isResponse('c'))).toMatchObject({ error: { code: 'unknown_method' } });
    await stillAnswers(1);
  });

  it('ignores blank lines and accepts CRLF', async () => {
    raw.send('\n   \n');
    raw.socket.write(`${JSON.stringify({ id: 7, method: 'operator.status' })}\r\n`);
    expect(await raw.take(isResponse(7))).toMatchObject({ result: { state: 'idle' } });
    expect(raw.frames.filter((f) => f.event === 'operator.error')).toEqual([]);
  });

  it('discards a 5 MiB line with one line_too_long error, with bounded memory, and answers afterwards', async () => {
    const before = process.memoryUsage().rss;
    const line = Buffer.alloc(5 * MiB, 'x');
    line.write('{"id":99,"method":"operator.submit","params":{"text":"', 0);
    raw.socket.write(line);
    raw.socket.write('"}}\n');
    const error = await raw.take(isEvent('operator.error'));
    expect(error.payload).toMatchObject({ code: 'line_too_long', message: expect.stringContaining(`${MiB} bytes`) });
    await stillAnswers(2);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * MiB);
    expect(raw.frames).toEqual([]); // no second error, no answer to id 99
    expect(gw.calls.map((c) => c.method)).toEqual(['submit']);
  });

  it('streams 512 MiB without a newline through a bounded buffer', async () => {
    const chunk = Buffer.alloc(MiB, 'y');
    const before = process.memoryUsage().rss;
    let peak = before;
    for (let i = 0; i < 512; i++) {
      if (!raw.socket.write(chunk)) await once(raw.socket, 'drain');
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    raw.socket.write('\n');
    expect((await raw.take(isEvent('operator.error'))).payload).toMatchObject({ code: 'line_too_long' });
    await stillAnswers(3);
    expect(peak - before).toBeLessThan(64 * MiB);
    expect(raw.frames).toEqual([]); // reported once
    expect(gw.errors).toEqual([]);
  }, 30_000);

  it('accepts a line of exactly the limit', async () => {
    const prefix = '{"id":5,"method":"operator.submit","params":{"text":"';
    const suffix = '"}}';
    const text = 'z'.repeat(MiB - prefix.length - suffix.length);
    raw.send(`${prefix}${text}${suffix}`);
    expect(await raw.take(isResponse(5))).toMatchObject({ result: { session_id: SESSION } });
  });
});
