import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliBin, demiurge, tempHome } from './cli.js';
import { recordGolden } from './golden-record.js';
import { killWatched, type ServeProcess, startServe, watchCli, writeHostHome } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  killWatched();
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

/** Plan mode asks for writes; the model writes a file, then answers. */
function planHome(): string {
  return writeHostHome(home.path, {
    script: [
      { tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'approved words' } }] },
      { content: 'wrote notes.txt' },
    ],
    extra: ['plan_mode:', '  on_write: ask'],
  });
}

const NOTICE =
  /waits for approval (apr_\w+): write_file .*\n.*grant it with: (demiurge approvals grant apr_\w+ --home \S+)/;

async function blockedRun(ws: string) {
  const run = watchCli(['run', 'write the notes', '--plan', '--home', home.path], { cwd: ws });
  const [, approvalId, command] = await run.stderrMatch(NOTICE);
  expect(command).toBe(`demiurge approvals grant ${approvalId} --home ${home.path}`);
  return { run, approvalId: approvalId! };
}

async function listed(): Promise<{ approvalId: string; status: string; tool: string; runId: string }[]> {
  const list = await demiurge(['approvals', 'list', '--json', '--home', home.path]);
  expect(list.code, list.stderr).toBe(0);
  return (JSON.parse(list.stdout) as { approvals: never[] }).approvals;
}

describe('approvals from the CLI', () => {
  it('in-process: a blocked run --plan prints the approval id and the command; approvals list/grant from another process let it finish', async () => {
    const ws = planHome();
    const { run, approvalId } = await blockedRun(ws);
    expect(await listed()).toEqual([expect.objectContaining({ approvalId, status: 'requested', tool: 'write_file' })]);
    const text = await demiurge(['approvals', 'list', '--home', home.path]);
    expect(text.stdout).toContain(approvalId);
    const grant = await demiurge(['approvals', 'grant', approvalId, '--home', home.path]);
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stdout).toContain(`approval ${approvalId}: granted`);
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim()).toBe('wrote notes.txt');
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('approved words');
    expect(await listed()).toEqual([]);
    await recordGolden('e2e-approval-granted', home.path);
  }, 60_000);

  it('through a serving host: list and grant go through its gateway, and the run client gets its answer', async () => {
    const ws = planHome();
    serve = await startServe(home.path, ws);
    const { run, approvalId } = await blockedRun(ws);
    expect(await listed()).toEqual([expect.objectContaining({ approvalId, status: 'requested', tool: 'write_file' })]);
    const grant = await demiurge(['approvals', 'grant', approvalId, '--home', home.path]);
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stdout).toContain('through the serving host');
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim()).toBe('wrote notes.txt');
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('approved words');
  }, 60_000);

  it('deny: the run goes on without the call; a second decision is refused in one line', async () => {
    const ws = planHome();
    const { run, approvalId } = await blockedRun(ws);
    const deny = await demiurge(['approvals', 'deny', approvalId, '--note', 'not now', '--home', home.path]);
    expect(deny.code, deny.stderr).toBe(0);
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(() => readFileSync(join(ws, 'notes.txt'))).toThrow();
    const again = await demiurge(['approvals', 'grant', approvalId, '--home', home.path]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^demiurge: .*denied/);
    expect(again.stderr).not.toMatch(/unexpected/);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    await recordGolden('e2e-approval-denied', home.path);
  }, 60_000);
});

/** util-linux `script` gives the child a terminal, so `chat` is interactive as for a person. */
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('approvals in an interactive chat', () => {
  it.skipIf(!hasScript)(
    'shows the pending call and asks (y/n); y grants it and the turn finishes',
    async () => {
      const ws = planHome();
      const command = `${process.execPath} ${cliBin} chat --plan --home ${home.path}`;
      const term = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ws, stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      const waiters = new Set<() => void>();
      term.stdout.on('data', (d: Buffer) => {
        screen += d.toString();
        for (const w of [...waiters]) w();
      });
      const exited = new Promise<number | null>((resolve) => term.once('close', resolve));
      const shown = (pattern: RegExp) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`the terminal never showed ${pattern}: ${screen}`)), 20_000);
          const check = () => {
            if (!pattern.test(screen)) return;
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          };
          waiters.add(check);
          check();
        });
      try {
        await shown(/end with Ctrl-D/);
        term.stdin.write('write the notes\r');
        await shown(
          /approve write_file \{"content":"approved words","path":"notes.txt"\} \(plan mode[^)]*\)\? \(y\/n\)/,
        );
        term.stdin.write('y\r');
        await shown(/approval apr_\w+ granted/);
        await shown(/wrote notes\.txt/);
        term.stdin.write('\x04');
        expect(await exited).toBe(0);
      } finally {
        term.kill('SIGKILL');
      }
      expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('approved words');
    },
    60_000,
  );
});
