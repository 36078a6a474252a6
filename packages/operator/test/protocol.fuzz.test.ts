import { fuzzSettings } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../src/event-hub.js';
import { OperatorConnection } from '../src/operator-connection.js';
import { OperatorLimits } from '../src/protocol.js';
import { fakeBackend } from './fake-backend.js';
import { requestLine, requestObject } from './frame-arbitraries.js';
import { INIT, isResponse, rawConnect, startGateway } from './harness.js';

type Frame = Record<string, unknown>;

/** What the protocol must answer to one line, judged from the line alone. */
function expectedAnswer(line: string): 'none' | 'event' | 'response' {
  if (line.trim() === '') return 'none';
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'event';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'event';
  const id = (value as Frame).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? 'response' : 'event';
}

/** An error a client gets must be clear: a known code, a short message without a stack trace. */
function expectClearError(error: Frame): void {
  expect(error.code).not.toBe('internal');
  expect(typeof error.message).toBe('string');
  const message = error.message as string;
  expect(message).not.toMatch(/\n\s+at |unexpected error/i);
  expect(message.length).toBeLessThan(600);
  if (error.code === 'invalid_params') {
    expect(message).toMatch(/params/);
    if (error.field !== undefined) expect(message).toContain(String(error.field));
  }
}

/** A connection over in-memory IO and a recording backend: the decoder and dispatch with no transport. */
function decoder() {
  const fake = fakeBackend();
  const errors: unknown[] = [];
  const out: Frame[] = [];
  const hub = new EventHub(fake.backend.events$, (e) => errors.push(e));
  const connection = new OperatorConnection(
    {
      write: (text) => {
        for (const line of text.split('\n')) if (line !== '') out.push(JSON.parse(line) as Frame);
      },
      writableLength: 0,
      pause: () => {},
      resume: () => {},
      end: () => {},
      destroy: () => {},
    },
    { backend: fake.backend, hub, version: 'fuzz', limits: OperatorLimits, onError: (e) => errors.push(e) },
  );
  /** Sends one line and returns what came back once the connection settled. */
  const send = async (line: string): Promise<Frame[]> => {
    const before = out.length;
    connection.push(Buffer.from(`${line}\n`));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return out.slice(before);
  };
  return { fake, errors, out, send, connection };
}

const INIT_LINE = JSON.stringify({ id: 'init', method: 'operator.initialize', params: INIT });

describe('operator protocol fuzz: the decoder and dispatch', () => {
  it('answers every mutated frame once, clearly, and calls the backend only for valid requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestLine, { maxLength: 4 }),
        fc.boolean(),
        fc.array(requestLine, { minLength: 1, maxLength: 12 }),
        async (before, initialize, lines) => {
          const d = decoder();
          for (const line of [...before, ...(initialize ? [INIT_LINE] : []), ...lines]) {
            const callsBefore = d.fake.calls.length;
            const frames = await d.send(line);
            const expected = expectedAnswer(line);
            if (expected === 'none') {
              expect(frames).toEqual([]);
              continue;
            }
            const answers = frames.filter((f) => 'id' in f || f.event === 'operator.error');
            expect(answers).toHaveLength(1);
            const answer = answers[0]!;
            if (expected === 'event') {
              expect(answer.event).toBe('operator.error');
              expectClearError(answer.payload as Frame);
            } else {
              expect(answer.id).toEqual((JSON.parse(line) as Frame).id);
              if ('error' in answer) {
                expectClearError(answer.error as Frame);
                // A refused request reached no backend method (initialize with a session reads status only).
                expect(d.fake.calls.slice(callsBefore).map((c) => c.method)).toEqual([]);
              }
            }
          }
          expect(d.errors).toEqual([]);
          d.connection.close();
        },
      ),
      fuzzSettings('operator frames (decoder)', 300),
    );
  });

  it('regression: a huge method name or params value is not echoed back in full', async () => {
    const d = decoder();
    await d.send(INIT_LINE);
    const [answer] = await d.send(JSON.stringify({ id: 1, method: 'operator.submit', params: 'x'.repeat(100_000) }));
    expect(answer).toMatchObject({ id: 1, error: { code: 'invalid_params' } });
    expectClearError((answer as Frame).error as Frame);
  });
});

describe('operator protocol fuzz: over a real unix socket', () => {
  it('keeps serving after every mutated frame and never answers internal', async () => {
    const gw = await startGateway();
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(requestObject, { minLength: 1, maxLength: 8 }), async (requests) => {
          const raw = await rawConnect(gw.server.path);
          try {
            raw.send(JSON.stringify({ id: 'init', method: 'operator.initialize', params: INIT }));
            await raw.take(isResponse('init'));
            for (const [i, request] of requests.entries()) {
              const id = `fz${i}`;
              raw.send(JSON.stringify({ ...request, id }));
              const answer = await raw.take(isResponse(id));
              if ('error' in answer) expectClearError(answer.error as Frame);
            }
            raw.send(JSON.stringify({ id: 'alive', method: 'operator.status', params: {} }));
            expect(await raw.take(isResponse('alive'))).toHaveProperty('result');
          } finally {
            raw.socket.destroy();
          }
        }),
        fuzzSettings('operator frames (unix socket)', 40),
      );
      expect(gw.errors).toEqual([]);
    } finally {
      await gw.dispose();
    }
  });
});
