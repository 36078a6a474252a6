import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type OperatorSession, parseApprovalDecision, type SessionOpen, serveStdio } from '../src/index.js';
import { fakeBackend } from './fake-backend.js';
import { INIT } from './harness.js';

const HANDSHAKE = { protocol_version: 1, build_stamp: 'demiurge-operator-v1' };

/** A stdio server whose backend binds original-handshake connections to a recording session. */
function sessionServer() {
  const input = new PassThrough();
  const output = new PassThrough();
  const fake = fakeBackend();
  const calls: Array<[string, unknown]> = [];
  const record = <T>(name: string, params: unknown, result: T): T => {
    calls.push([name, params]);
    return result;
  };
  const refused: string[] = [];
  let opened: SessionOpen | undefined;
  const session: OperatorSession = {
    initialize: async () => ({ session_id: 'ses_x', status: 'idle' }),
    announce: () => opened?.emit('operator.ready', { session_id: 'ses_x' }),
    submit: async (p) => record('submit', p, { accepted: true, queued: false }),
    replyPrompt: async (p) => record('replyPrompt', p, { accepted: false, reason: 'prompt not pending' }),
    replyApproval: async (p) => record('replyApproval', p, { accepted: true, decision: p.decision }),
    command: async (p) => record('command', p, { handled: true, exit: false }),
    interrupt: async (p) => record('interrupt', p, { interrupted: true }),
    shutdown: async () => record('shutdown', {}, { shutdown: true }),
    close: () => calls.push(['close', {}]),
  };
  const backend = {
    ...fake.backend,
    events$: fake.backend.events$,
    openSession: async (open: SessionOpen) => {
      opened = open;
      return session;
    },
    handshakeRefused: (reason: string) => refused.push(reason),
  };
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
  const server = serveStdio({ input, output, backend });
  let id = 0;
  const send = (method: string, params: unknown) => {
    input.write(`${JSON.stringify({ id: ++id, method, params })}\n`);
    return id;
  };
  return { frames, server, send, calls, refused, fake, input };
}

const settle = () => new Promise((r) => setTimeout(r, 30));

describe('the session-bound dialect (the original handshake)', () => {
  it('binds a connection that initializes without client: build_stamp echoed, original methods to the session', async () => {
    const s = sessionServer();
    s.send('operator.initialize', HANDSHAKE);
    await settle();
    expect(s.frames[0]).toEqual({
      id: 1,
      result: { session_id: 'ses_x', status: 'idle', protocol_version: 1, build_stamp: 'demiurge-operator-v1' },
    });
    expect(s.frames[1]).toEqual({ event: 'operator.ready', payload: { session_id: 'ses_x' } });
    s.send('operator.submit', { text: 'hi' });
    s.send('operator.reply_approval', { approval_id: 'apr_1', decision: 'a' });
    s.send('operator.reply_prompt', { prompt_id: 'prompt_1', answer: '2' });
    s.send('operator.command', { text: '/tasks' });
    s.send('operator.interrupt', { reason: 'Ctrl-C' });
    s.send('operator.interrupt', {});
    s.send('operator.shutdown', {});
    // An extension method goes to the backend with its own params.
    s.send('operator.history', { session_id: 'ses_01JD5Y7Q6N0000000000000001' });
    await settle();
    expect(s.calls).toEqual([
      ['submit', { text: 'hi' }],
      ['replyApproval', { approval_id: 'apr_1', decision: 'session', raw: 'a' }],
      ['replyPrompt', { prompt_id: 'prompt_1', answer: '2' }],
      ['command', { text: '/tasks' }],
      ['interrupt', { reason: 'Ctrl-C' }],
      ['interrupt', { reason: 'operator.interrupt' }],
      ['shutdown', {}],
    ]);
    expect(s.fake.methodsCalled()).toEqual(['history']);
    expect(s.frames.filter((f) => 'error' in f)).toEqual([]);
    s.input.end();
    await s.server.closed;
    expect(s.calls.at(-1)).toEqual(['close', {}]);
  });

  it('answers a second initialize on a bound connection and announces again', async () => {
    const s = sessionServer();
    s.send('operator.initialize', HANDSHAKE);
    await settle();
    s.send('operator.initialize', { protocol_version: 1 });
    await settle();
    expect(s.frames.filter((f) => f.event === 'operator.ready')).toHaveLength(2);
    expect(s.frames[2]).toMatchObject({ id: 2, result: { build_stamp: 'demiurge-operator-v1', session_id: 'ses_x' } });
  });

  it('refuses another build stamp or protocol version as protocol_mismatch and tells the backend', async () => {
    const s = sessionServer();
    s.send('operator.initialize', { protocol_version: 1, build_stamp: 'other' });
    s.send('operator.initialize', { protocol_version: 2, build_stamp: 'demiurge-operator-v1' });
    await settle();
    expect(s.frames.map((f) => (f.error as { code: string }).code)).toEqual(['protocol_mismatch', 'protocol_mismatch']);
    expect(s.refused).toHaveLength(2);
    expect(s.calls).toEqual([]);
  });

  it('keeps the extension handshake (with client) on the project protocol', async () => {
    const s = sessionServer();
    s.send('operator.initialize', INIT);
    await settle();
    expect(s.frames[0]).toMatchObject({ id: 1, result: { protocol_version: 1, server: { name: 'demiurge' } } });
    expect(s.calls).toEqual([]);
  });

  it('maps the original approval decisions', () => {
    for (const d of ['1', 'y', 'Y', 'yes', 'allow', 'once']) expect(parseApprovalDecision(d)).toBe('once');
    for (const d of ['2', 'a', 'always', 'session']) expect(parseApprovalDecision(d)).toBe('session');
    for (const d of ['3', 'n', 'deny', 'maybe', '', undefined, 7]) expect(parseApprovalDecision(d)).toBe('deny');
  });
});
