import { PassThrough } from 'node:stream';
import { fuzzSettings } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type OperatorSession, type SessionOpen, serveStdio } from '../src/index.js';
import { fakeBackend } from './fake-backend.js';
import { requestObject } from './frame-arbitraries.js';

type Frame = Record<string, unknown>;

/**
 * The session-bound dialect (the original TUI's handshake) fuzzed over stdio: every request is answered with
 * a result (never an error: the original client treats one as fatal), and what reaches the session is text,
 * never `[object Object]`.
 */
function sessionServer() {
  const input = new PassThrough();
  const output = new PassThrough();
  const fake = fakeBackend();
  const texts: string[] = [];
  const errors: unknown[] = [];
  const session: OperatorSession = {
    initialize: async () => ({ session_id: 'ses_x', status: 'idle' }),
    announce: () => {},
    submit: async (p) => {
      texts.push(p.text);
      return p.text.trim() ? { accepted: true } : { accepted: false, reason: 'empty' };
    },
    replyPrompt: async (p) => {
      texts.push(p.prompt_id, p.answer);
      return { accepted: false, reason: 'prompt not pending' };
    },
    replyApproval: async (p) => {
      texts.push(p.approval_id, p.raw);
      return { accepted: false };
    },
    command: async (p) => {
      texts.push(p.text);
      return { handled: false };
    },
    interrupt: async (p) => {
      texts.push(p.reason);
      return { interrupted: false };
    },
    shutdown: async () => ({ shutdown: false }),
    close: () => {},
  };
  const backend = { ...fake.backend, openSession: async (_open: SessionOpen) => session };
  const frames: Frame[] = [];
  let rest = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    rest += chunk;
    for (let i = rest.indexOf('\n'); i !== -1; i = rest.indexOf('\n')) {
      frames.push(JSON.parse(rest.slice(0, i)) as Frame);
      rest = rest.slice(i + 1);
    }
  });
  const server = serveStdio({ input, output, backend, onError: (e) => errors.push(e) });
  return { input, frames, texts, errors, server, fake };
}

/** The original handshake, mostly valid, sometimes mutated (version, build stamp, session id, an extra key). */
const handshake = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ protocol_version: 1 } as Record<string, unknown>) },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        protocol_version: fc.constantFrom(1, 2, '1', null, 1.5),
        build_stamp: fc.constantFrom('demiurge-operator-v1', 'other', 42, ''),
        session_id: fc.constantFrom('ses_x', '', 7),
        extra: fc.constant(true),
      },
      { requiredKeys: [] },
    ),
  },
);

describe('operator session dialect fuzz', () => {
  it('answers every mutated frame and hands the session text only', async () => {
    await fc.assert(
      fc.asyncProperty(handshake, fc.array(requestObject, { minLength: 1, maxLength: 10 }), async (init, requests) => {
        const s = sessionServer();
        const lines = [{ id: 'init', method: 'operator.initialize', params: init }];
        lines.push(...requests.map((r, i) => ({ ...r, id: `fz${i}` }) as (typeof lines)[number]));
        s.input.end(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
        await s.server.closed;
        for (const [i, request] of requests.entries()) {
          const answer = s.frames.find((f) => f.id === `fz${i}`);
          expect(answer, JSON.stringify(request).slice(0, 200)).toBeDefined();
          if (answer && 'error' in answer) expect((answer.error as Frame).code).not.toBe('internal');
        }
        for (const t of s.texts) expect(t).not.toContain('[object ');
        expect(s.errors).toEqual([]);
      }),
      fuzzSettings('operator session dialect', 150),
    );
  });

  it('regression (fuzz): submit {"text":{}} is empty text, not "[object Object]"', async () => {
    const s = sessionServer();
    s.input.end(
      `${JSON.stringify({ id: 0, method: 'operator.initialize', params: { protocol_version: 1 } })}\n` +
        `${JSON.stringify({ id: 1, method: 'operator.submit', params: { text: { a: 1 } } })}\n` +
        `${JSON.stringify({ id: 2, method: 'operator.command', params: { text: ['/exit'] } })}\n`,
    );
    await s.server.closed;
    expect(s.frames.find((f) => f.id === 1)).toMatchObject({ result: { accepted: false, reason: 'empty' } });
    expect(s.texts).toEqual(['', '']);
  });
});
