import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { tempHome } from './cli.js';

/**
 * The gateway the original TUI starts, as it starts it: `<shim> -m demiurge.ui_gateway.entry` with
 * `DEMIURGE_TUI_GATEWAY_CONFIG`, NDJSON over stdio; frames and exit codes as the original gateway's.
 */
const require = createRequire(import.meta.url);
const shim = join(dirname(require.resolve('@demiurge/cli/package.json')), 'bin', 'demiurge-tui-gateway');
const HANDSHAKE = { protocol_version: 1, build_stamp: 'demiurge-operator-v1' };

interface Frame {
  readonly id?: number;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: string; message: string };
  readonly event?: string;
  readonly payload?: Record<string, unknown>;
}

class Gateway {
  readonly child: ChildProcessWithoutNullStreams;
  readonly frames: Frame[] = [];
  /** What the gateway wrote to stderr: the TUI shows every such line as an error notice. */
  stderr = '';
  readonly exited: Promise<number | null>;
  private nextId = 0;
  private waiters: (() => void)[] = [];

  constructor(config: unknown, args: readonly string[] = ['-m', 'demiurge.ui_gateway.entry']) {
    this.child = spawn(shim, [...args], {
      env: {
        ...process.env,
        DEMIURGE_NODE: process.execPath,
        DEMIURGE_TUI_GATEWAY_CONFIG: typeof config === 'string' ? config : JSON.stringify(config),
      },
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.frames.push(JSON.parse(line) as Frame);
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  send(method: string, params: Record<string, unknown> = {}): number {
    const id = ++this.nextId;
    this.child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    return id;
  }

  async request(method: string, params: Record<string, unknown> = {}): Promise<Frame> {
    const id = this.send(method, params);
    return this.until((f) => f.id === id);
  }

  /** Resolves with the first frame (from `from`) that matches. */
  async until(test: (f: Frame) => boolean, from = 0, timeoutMs = 20_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find(test);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no such frame; got:\n${JSON.stringify(this.frames, null, 1)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  events(name: string): Frame[] {
    return this.frames.filter((f) => f.event === name);
  }
}

/** A home on the fake provider with `script`, plan-mode writes asking for an approval. */
function makeHome(script: readonly unknown[]): { path: string; workspace: string; remove(): void } {
  const home = tempHome();
  const workspace = join(home.path, 'ws');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(home.path, 'script.json'), JSON.stringify(script));
  writeFileSync(
    join(home.path, 'config.yaml'),
    `provider:\n  name: fake\n  fake_script: script.json\nworkspace: ${workspace}\nplan_mode:\n  on_write: ask\nscheduler:\n  enabled: false\ndelivery:\n  poll_ms: 50\n`,
  );
  return { ...home, workspace };
}

describe('the TUI gateway (original protocol over stdio)', () => {
  const home = makeHome([{ content: 'one' }, { content: 'two' }]);
  const planHome = makeHome([
    { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'A' } }] },
    { content: 'done' },
  ]);
  const workspace = home.workspace;
  const config = { home: home.path };

  afterAll(() => {
    home.remove();
    planHome.remove();
  });

  it('initialize without client: build_stamp and the status snapshot, then ready and status; submit continues one session; replies are operator.deliver; /exit exits 0', async () => {
    const gw = new Gateway(config);
    const init = await gw.request('operator.initialize', HANDSHAKE);
    expect(init.result).toMatchObject({
      protocol_version: 1,
      build_stamp: 'demiurge-operator-v1',
      status: 'idle',
      provider: 'fake',
      model: 'fake-1',
      workspace,
      queued_inputs: 0,
      background_tasks: 0,
      pending_approvals: 0,
      pending_prompts: 0,
      last_error: '',
      work: [],
    });
    const sessionId = init.result?.session_id as string;
    expect(sessionId).toMatch(/^ses_/);
    const ready = await gw.until((f) => f.event === 'operator.ready');
    expect(ready.payload).toMatchObject({ session_id: sessionId, busy_mode: 'interrupt', tool_display: 'summary' });
    expect(((ready.payload?.slash_commands as { name: string }[] | undefined) ?? []).map((c) => c.name)).toEqual(
      expect.arrayContaining(['help', 'status', 'tasks', 'task', 'cancel', 'interrupt', 'plan', 'approvals']),
    );
    await gw.until((f) => f.event === 'operator.status');

    expect((await gw.request('operator.submit', { text: '  ' })).result).toEqual({ accepted: false, reason: 'empty' });
    expect((await gw.request('operator.submit', { text: 'first' })).result).toEqual({ accepted: true, queued: false });
    await gw.until((f) => f.event === 'operator.status' && f.payload?.status === 'running');
    const one = await gw.until((f) => f.event === 'operator.deliver' && f.payload?.deliveries !== undefined);
    expect(one.payload).toMatchObject({
      channel: 'tui',
      session_id: sessionId,
      deliveries: [{ type: 'text', kind: 'message', text: 'one', visible: true, metadata: { role: 'assistant' } }],
    });
    expect(one.payload?.turn_id).toMatch(/^trn_/);
    const mark = gw.frames.length;
    await gw.request('operator.submit', { text: 'second' });
    const two = await gw.until(
      (f) => f.event === 'operator.deliver' && (f.payload?.deliveries as { text: string }[])?.[0]?.text === 'two',
      mark,
    );
    expect(two.payload?.session_id).toBe(sessionId);
    expect(gw.events('operator.message').map((f) => f.payload)).toEqual([
      { role: 'user', text: 'first' },
      { role: 'user', text: 'second' },
    ]);
    await gw.until((f) => f.event === 'operator.status' && f.payload?.status === 'idle', mark);

    // Slash commands: handled, output as a system delivery; unknown and missing ones handled:false + a notice.
    expect((await gw.request('operator.command', { text: '/tasks' })).result).toEqual({ handled: true, exit: false });
    // `/compact` is handled: four messages are all kept, so a warning says there is nothing to compact.
    expect((await gw.request('operator.command', { text: '/compact' })).result).toEqual({ handled: true, exit: false });
    await gw.until(
      (f) =>
        f.event === 'operator.deliver' &&
        (f.payload?.deliveries as { text: string }[])?.[0]?.text ===
          `nothing to compact in session ${sessionId}: the last 4 messages are always kept, and nothing older is`,
    );
    expect((await gw.request('operator.command', { text: '/packages' })).result).toEqual({
      handled: false,
      exit: false,
    });
    expect((await gw.request('operator.command', { text: '/frobnicate' })).result).toEqual({
      handled: false,
      exit: false,
    });
    await gw.until(
      (f) =>
        f.event === 'operator.deliver' &&
        (f.payload?.deliveries as { kind: string; text: string }[])?.[0]?.text === 'unknown command: /frobnicate',
    );
    expect((await gw.request('operator.interrupt', { reason: 'Ctrl-C' })).result).toEqual({ interrupted: true });
    // This project's extension methods stay reachable with their own params.
    const history = await gw.request('operator.history', { session_id: sessionId });
    expect(
      ((history.result?.messages as { role: string; text: string }[] | undefined) ?? []).map((m) => m.text),
    ).toEqual(['first', 'one', 'second', 'two']);

    expect((await gw.request('operator.command', { text: '/exit' })).result).toEqual({ handled: true, exit: true });
    expect(gw.events('operator.shutdown').length).toBeGreaterThanOrEqual(1);
    expect(await gw.exited).toBe(0);
    expect(gw.frames.filter((f) => f.error !== undefined || f.event === 'operator.error')).toEqual([]);
    expect(gw.stderr).toBe('');

    // A restart with the session: operator.history pushed at initialize, in the original item shape.
    const again = new Gateway({ ...config, session: sessionId });
    await again.request('operator.initialize', HANDSHAKE);
    const pushed = await again.until((f) => f.event === 'operator.history');
    expect(pushed.payload?.session_id).toBe(sessionId);
    expect(pushed.payload?.items).toEqual([
      expect.objectContaining({ type: 'message', role: 'user', text: 'first' }),
      expect.objectContaining({ type: 'message', role: 'assistant', text: 'one' }),
      expect.objectContaining({ type: 'message', role: 'user', text: 'second' }),
      expect.objectContaining({ type: 'message', role: 'assistant', text: 'two' }),
    ]);
    // As the TUI leaves: shutdown, then the end of its input at once: still 0.
    const bye = again.send('operator.shutdown');
    again.child.stdin.end();
    expect(await again.exited).toBe(0);
    expect(again.frames.find((f) => f.id === bye)?.result).toEqual({ shutdown: true });
    expect(again.stderr).toBe('');
  });

  it('/compact summarizes the older messages for the model; the output says how many', async () => {
    const gw = new Gateway({ home: home.path });
    await gw.request('operator.initialize', HANDSHAKE);
    for (const text of ['alpha', 'beta', 'gamma']) {
      const mark = gw.frames.length;
      await gw.request('operator.submit', { text });
      await gw.until((f) => f.event === 'operator.status' && f.payload?.status === 'idle', mark);
    }
    expect((await gw.request('operator.command', { text: '/compact' })).result).toEqual({ handled: true, exit: false });
    const out = await gw.until(
      (f) =>
        f.event === 'operator.deliver' &&
        (f.payload?.deliveries as { metadata?: { command?: string } }[])?.[0]?.metadata?.command === 'compact',
    );
    expect((out.payload?.deliveries as { text: string }[] | undefined)?.[0]?.text).toMatch(
      /^compacted \(cmp_1\): 2 messages summarized for the model; ~\d+ -> ~\d+ tokens of 32768\. The transcript keeps every message\.$/,
    );
    const bye = gw.send('operator.shutdown');
    gw.child.stdin.end();
    expect(await gw.exited).toBe(0);
    expect(gw.frames.find((f) => f.id === bye)?.result).toEqual({ shutdown: true });
  });

  it('plan mode: operator.approval.opened in the original shape; the original decision "y" grants and the file is written', async () => {
    const gw = new Gateway({ home: planHome.path });
    await gw.request('operator.initialize', HANDSHAKE);
    await gw.request('operator.command', { text: '/plan on' });
    await gw.request('operator.submit', { text: 'write a' });
    const opened = await gw.until((f) => f.event === 'operator.approval.opened');
    expect(opened.payload).toMatchObject({
      approval_id: expect.stringMatching(/^apr_/),
      request: { tool_name: 'write_file', target: 'a.txt', arguments_preview: { path: 'a.txt', content: 'A' } },
    });
    const status = await gw.until((f) => f.event === 'operator.status' && f.payload?.pending_approvals === 1);
    expect(status.payload?.status).toBe('running');
    expect(
      (await gw.request('operator.reply_approval', { approval_id: 'apr_nope', decision: 'y' })).result,
    ).toMatchObject({ accepted: false });
    const reply = await gw.request('operator.reply_approval', {
      approval_id: opened.payload?.approval_id,
      decision: 'y',
    });
    expect(reply.result).toEqual({ accepted: true, decision: 'once' });
    await gw.until(
      (f) => f.event === 'operator.deliver' && (f.payload?.deliveries as { text: string }[])?.[0]?.text === 'done',
    );
    expect(readFileSync(join(planHome.workspace, 'a.txt'), 'utf8')).toBe('A');
    gw.child.stdin.end(); // end of input: exit 1, as the original
    expect(await gw.exited).toBe(1);
    expect(gw.frames.filter((f) => f.error !== undefined || f.event === 'operator.error')).toEqual([]);
    expect(gw.stderr).toBe('');
  });

  it('slash commands: help, status, approvals, sessions, doctor, history; /new binds a new session; /resume opens a prompt answered by reply_prompt', async () => {
    const cmdHome = makeHome([{ content: 'kept' }]);
    try {
      const gw = new Gateway({ home: cmdHome.path });
      const first = (await gw.request('operator.initialize', HANDSHAKE)).result?.session_id as string;
      await gw.request('operator.submit', { text: 'remember me' });
      await gw.until(
        (f) => f.event === 'operator.deliver' && (f.payload?.deliveries as { text: string }[])?.[0]?.text === 'kept',
      );
      const output = async (text: string) => {
        const mark = gw.frames.length;
        expect((await gw.request('operator.command', { text })).result).toEqual({ handled: true, exit: false });
        const out = await gw.until((f) => f.event === 'operator.deliver' && f.payload?.deliveries !== undefined, mark);
        return (
          (out.payload?.deliveries as { text: string; metadata: Record<string, unknown> }[] | undefined)?.[0] ?? {
            text: '',
            metadata: {},
          }
        );
      };
      expect((await output('/help')).text).toContain('/plan on|off');
      expect((await output('/status')).text).toContain(`session_id: ${first}`);
      expect((await output('/approvals')).text).toBe('no open approvals');
      expect((await output('/doctor')).metadata).toEqual({ command: 'doctor', role: 'system' });
      expect((await output('/sessions')).text).toContain(first);
      expect((await output('/new')).text).toMatch(/^new session: ses_/);
      const second = gw.events('operator.status').at(-1)?.payload?.session_id;
      expect(second).not.toBe(first);

      await gw.request('operator.command', { text: '/resume' });
      const prompt = await gw.until((f) => f.event === 'operator.prompt.opened');
      expect(prompt.payload).toMatchObject({ kind: 'resume', question: 'Resume session' });
      expect(prompt.payload?.choices).toContain(first);
      const mark = gw.frames.length;
      const answer = await gw.request('operator.reply_prompt', { prompt_id: prompt.payload?.prompt_id, answer: first });
      expect(answer.result).toEqual({ accepted: true, kind: 'resume', session_id: first });
      const history = await gw.until((f) => f.event === 'operator.history', mark);
      expect(((history.payload?.items as { text: string }[] | undefined) ?? []).map((i) => i.text)).toEqual([
        'remember me',
        'kept',
      ]);
      expect((await gw.request('operator.shutdown')).result).toEqual({ shutdown: true });
      expect(await gw.exited).toBe(0);
      expect(gw.frames.filter((f) => f.error !== undefined || f.event === 'operator.error')).toEqual([]);
    } finally {
      cmdHome.remove();
    }
  });

  it('exit codes: a build mismatch 2 (protocol_mismatch), a bad config 2 (config_error on stdout), a missing session 1', async () => {
    const mismatch = new Gateway(config);
    const refused = await mismatch.request('operator.initialize', { protocol_version: 1, build_stamp: 'other' });
    expect(refused.error?.code).toBe('protocol_mismatch');
    expect(await mismatch.exited).toBe(2);

    const badConfig = new Gateway('{not json');
    expect(await badConfig.exited).toBe(2);
    expect(badConfig.frames[0]).toMatchObject({ event: 'operator.error', payload: { code: 'config_error' } });

    const missing = new Gateway({ ...config, resume: 'ses_01M8S0000000000000000000' });
    expect(await missing.exited).toBe(1);
    expect(missing.frames[0]).toMatchObject({ event: 'operator.error', payload: { source: 'gateway_startup' } });

    const wrongArgs = new Gateway(config, ['-c', 'print(1)']);
    expect(await wrongArgs.exited).toBe(2);
  });
});
