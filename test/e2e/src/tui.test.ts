import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, tempHome } from './cli.js';
import { hasTmux, TmuxTerminal } from './tmux.js';

/**
 * The original Demiurge terminal UI (the unmodified bundle in shared/clients/demiurge-tui) against this host,
 * in a real terminal (tmux): `demiurge tui --client entry.js` starts it, and it starts its gateway through
 * the shim as `$DEMIURGE_TUI_GATEWAY_PYTHON -m demiurge.ui_gateway.entry`. Every frame the client receives
 * is traced (DEMIURGE_TUI_GATEWAY_TRACE) to check that none is an `operator.error`.
 */
// `shared/` sits beside the repository (a worktree is one level deeper).
const repoRoot = resolve(import.meta.dirname, '..', '..', '..');
const client = resolve(
  process.env.DEMIURGE_TUI_CLIENT ??
    [join(repoRoot, '..'), join(repoRoot, '..', '..')]
      .map((dir) => join(dir, 'shared', 'clients', 'demiurge-tui', 'entry.js'))
      .find((path) => existsSync(path)) ??
    join(repoRoot, '..', 'shared', 'clients', 'demiurge-tui', 'entry.js'),
);
const skipReason = !hasTmux()
  ? 'tmux is not installed (.ci/run installs it)'
  : !existsSync(client)
    ? `the TUI bundle is not at ${client} (set DEMIURGE_TUI_CLIENT)`
    : undefined;
if (skipReason) console.warn(`tui.test.ts skipped: ${skipReason}`);

// The fake provider plays step n for a request holding n assistant messages: a tool round counts within its
// turn only (the kept transcript has one reply per turn), so the step after a tool call also answers the
// next turn's first request, and an interrupted turn keeps no reply. Steps with `match` form the conversation
// of a session whose first message contains that text (`/new` starts one): they do not depend on how many
// replies the main session holds.
//
// The detached task is started in a turn of its own, not in the interrupted one: a run cancelled by Ctrl-C
// cancels the tasks it started, and the cancelled task's completion notice then starts a completion turn in
// the idle session (docs/detached-tasks.md), which would play the interrupted conversation again.
const script = [
  { content: 'first reply from the host' },
  { content: 'second reply from the host' },
  { tool_calls: [{ name: 'write_file', arguments: { path: 'plan-note.txt', content: 'written after approval\n' } }] },
  { content: 'the note is written' },
  { match: 'something long', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] },
  {
    match: 'a background command',
    tool_calls: [{ name: 'shell', arguments: { command: 'sleep 45', background: true } }],
  },
  // Also answers the completion turn of that task (cancelled when the TUI's host closes), if one is started.
  { match: 'a background command', content: 'the background command is running' },
];

/** The lines of the screen after the role label `label`: the transcript shows `demiurge` above a reply. */
function saidBy(screen: string, label: string, text: string): boolean {
  const lines = screen.split('\n').map((l) => l.trim());
  return lines.some((line, i) => line === text && lines.slice(Math.max(0, i - 3), i).includes(label));
}

/**
 * The TUI's input box: the text after its `message` label on the last such line of the screen (earlier frames
 * may be in the scrollback); '' while it shows its placeholder.
 */
function inputBox(screen: string): string | undefined {
  const line = screen
    .split('\n')
    .filter((l) => /^message\s/.test(l))
    .at(-1);
  if (line === undefined) return undefined;
  const text = line.slice('message'.length).trim();
  return text === 'Message demiurge, or type /help' ? '' : text;
}

describe.skipIf(skipReason !== undefined)('the original Demiurge TUI against this host (tmux)', () => {
  const home = tempHome();
  const workspace = join(home.path, 'ws');
  const trace = join(home.path, 'frames.ndjson');
  let tui: TmuxTerminal;
  let sessionId = '';

  const start = (name: string, extra: readonly string[] = []) =>
    new TmuxTerminal(
      name,
      [process.execPath, cliBin, 'tui', '--client', client, '--home', home.path, ...extra],
      { DEMIURGE_TUI_GATEWAY_TRACE: trace, TERM: 'xterm-256color' },
      workspace,
      { inputBox },
    );
  const frames = () =>
    existsSync(trace)
      ? readFileSync(trace, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { event?: string; id?: number; error?: unknown; payload?: unknown })
      : [];

  beforeAll(() => {
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(home.path, 'script.json'), JSON.stringify(script));
    writeFileSync(
      join(home.path, 'config.yaml'),
      [
        'provider:',
        '  name: fake',
        '  fake_script: script.json',
        `workspace: ${workspace}`,
        'plan_mode:',
        '  on_write: ask',
        'scheduler:',
        '  enabled: false',
        'delivery:',
        '  poll_ms: 50',
        '',
      ].join('\n'),
    );
    tui = start('tui1');
  });

  afterAll(() => {
    tui?.close();
    home.remove();
  });

  it('connects: the footer shows the session, the provider and idle', async () => {
    await tui.waitFor(/fake:fake-1 · idle/, 60_000);
    const ready = frames().find((f) => f.event === 'operator.ready');
    expect(ready?.payload).toMatchObject({ provider: 'fake', model: 'fake-1', workspace });
  });

  it('two messages in one session, each reply shown as the assistant’s', async () => {
    await tui.submit('hello from the tui');
    await tui.waitFor((s) => saidBy(s, 'demiurge', 'first reply from the host'));
    await tui.submit('and a second message');
    const screen = await tui.waitFor((s) => saidBy(s, 'demiurge', 'second reply from the host'));
    expect(saidBy(screen, 'you', 'hello from the tui')).toBe(true);
    expect(screen).not.toMatch(/^\s*system\s*\n\s*first reply/m);
    await tui.submit('/status');
    const status = await tui.waitFor(/session_id: (ses_\w+)/);
    sessionId = /session_id: (ses_\w+)/.exec(status)![1]!;
    expect(status).toMatch(/message_count: 4/);
  });

  it('plan mode: the approval panel answered "allow once" writes the file', async () => {
    await tui.submit('/plan on');
    await tui.waitFor(/plan mode: on/);
    await tui.submit('write the note');
    await tui.waitFor(/Esc denies/);
    expect(existsSync(join(workspace, 'plan-note.txt'))).toBe(false);
    tui.key('Enter'); // the first choice: allow once
    await tui.waitFor((s) => saidBy(s, 'demiurge', 'the note is written'));
    expect(readFileSync(join(workspace, 'plan-note.txt'), 'utf8')).toBe('written after approval\n');
    await tui.submit('/plan off');
    await tui.waitFor(/plan mode: off/);
  });

  /** `/new`: the TUI is bound to a fresh session (the screen starts over with its notice). */
  const newSession = async () => {
    const shown = (s: string) => [...s.matchAll(/new session: (ses_\w+)/g)].map((m) => m[1]!);
    const before = new Set(shown(tui.screen()));
    await tui.submit('/new');
    await tui.waitFor((s) => shown(s).some((id) => !before.has(id) && id !== sessionId));
  };

  it('Ctrl-C during a long tool call interrupts the turn and the TUI stays open', async () => {
    await newSession();
    await tui.submit('now something long');
    await tui.waitFor(/· running ·/);
    await tui.waitFor(/sleep 30/);
    tui.key('C-c');
    await tui.waitFor(/turn interrupted/, 15_000);
    await tui.waitFor(/fake:fake-1 · idle/);
    expect(tui.screen()).not.toMatch(/\[exit \d+\]/);
    tui.key('C-u'); // the client's input box also took the "c" of Ctrl-C
    await tui.waitFor((s) => inputBox(s) === ''); // read on its own, not with the next test's keys
  });

  it('/tasks lists the detached task the model started', async () => {
    await newSession();
    await tui.submit('start a background command');
    await tui.waitFor((s) => saidBy(s, 'demiurge', 'the background command is running'));
    await tui.waitFor(/fake:fake-1 · idle/);
    await tui.submit('/tasks');
    await tui.waitFor(/tsk_\w+\s+terminal\.exec\s+active\s+/);
  });

  /**
   * `/exit` once the host is idle. A failure says, in this order (a log may keep only a failure's first lines):
   * the screen's last lines (the input box, the footer, a notice of the gateway's), the pane's processes (alive?
   * blocked where?), the last frames the client received, then the whole screen.
   */
  const exitZero = async () => {
    await tui.waitFor(/fake:fake-1 · idle/);
    await tui.submit('/exit');
    await tui.waitFor(/\[exit 0\]/, 30_000).catch((err: Error) => {
      const processes = tui.processes();
      const last = frames()
        .slice(-4)
        .map((f) => JSON.stringify(f).slice(0, 160));
      const [head = '', ...rest] = err.message.split('\n');
      const first = head.replace(/; its last lines:$/, '.');
      const whole = rest.indexOf('--- the whole screen ---');
      const bottom = tui
        .screen()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .slice(-8);
      throw new Error(
        [
          first,
          '--- the screen now ends:',
          ...bottom,
          "--- the pane's processes (pid ppid state wchan cpu command):",
          ...processes,
          '--- the last frames the client received:',
          ...last,
          ...(whole >= 0 ? rest.slice(whole) : rest),
        ].join('\n'),
      );
    });
  };

  it('/exit exits 0, typed while the client is stopped for a moment', async () => {
    // As a loaded machine stalls it: the text and the Enter would then reach it in one read, a paste with a
    // newline and no submit (CI saw this), were Enter not pressed only once the input box shows the text.
    const clientPid = tui.pidOf(/entry\.js$/);
    const resume = () => {
      try {
        process.kill(clientPid, 'SIGCONT');
      } catch {
        // It has exited.
      }
    };
    process.kill(clientPid, 'SIGSTOP');
    const timer = setTimeout(resume, 1_000);
    try {
      await exitZero();
    } finally {
      clearTimeout(timer);
      resume();
    }
  });

  it('a restart with the session in the config shows its history', async () => {
    tui.close();
    tui = start('tui2', ['--session', sessionId]);
    const screen = await tui.waitFor((s) => saidBy(s, 'demiurge', 'second reply from the host'), 60_000);
    expect(saidBy(screen, 'demiurge', 'first reply from the host')).toBe(true);
    expect(saidBy(screen, 'you', 'hello from the tui')).toBe(true);
    expect(screen).toContain(sessionId.slice(-10));
    await exitZero();
  });

  it('no operator.error frame and no error reply reached the client', () => {
    const bad = frames().filter((f) => f.event === 'operator.error' || f.error !== undefined);
    expect(bad).toEqual([]);
    expect(frames().filter((f) => f.event === 'operator.history').length).toBeGreaterThanOrEqual(1);
  });
});
