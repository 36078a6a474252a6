import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliBin, demiurge, tempDir, until } from './cli.js';
import { writeHome } from './home.js';
import { LogReader } from './log-reader.js';
import { type ModelServer, type ServedRequest, startModelServer } from './model-server.js';
import { verifyHome } from './store-checks.js';

let dir: ReturnType<typeof tempDir> | undefined;
let server: ModelServer | undefined;
let waiting: ChildProcess | undefined;
afterEach(async () => {
  waiting?.kill('SIGKILL');
  await server?.close();
  dir?.remove();
  dir = server = waiting = undefined;
});

/** The last turn request (not a summary) whose input is `text`. */
const requestFor = (s: ModelServer, text: string): ServedRequest | undefined =>
  s.requests.filter((r) => !r.compaction && r.messages.at(-1)?.content === text).at(-1);

describe('a pending approval in the pinned context of a compacted request', () => {
  it('a turn admitted while another process waits for an approval sees it; once granted and used, it is gone', async () => {
    dir = tempDir();
    server = await startModelServer();
    const home = writeHome(dir.path, { script: [] });
    const config = [
      'provider:',
      '  name: openai',
      '  model: test-model',
      `  base_url: ${server.baseUrl}`,
      '  max_retries: 0',
      `workspace: ${home.workspace}`,
      'scheduler:',
      '  enabled: false',
      'plan_mode:',
      '  on_write: ask',
    ];
    writeFileSync(join(dir.path, 'config.yaml'), `${config.join('\n')}\n`);
    // No serving host: each `demiurge run` is a host of its own process (one turn at a time per session is a
    // rule of each process, so a second process admits a turn while the first waits for an approval).
    const run = (args: string[]) => demiurge([...args, '--home', dir!.path], { cwd: home.workspace });
    const first = await run(['run', 'first filler', '--plan', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as { sessionId: string }).sessionId;
    for (const text of ['second filler', 'third filler']) {
      expect((await run(['run', text, '--session', sessionId])).code).toBe(0);
    }
    const compacted = await run(['sessions', 'compact', sessionId]);
    expect(compacted.code, compacted.stderr).toBe(0);

    // Process 1: its turn asks to write, and waits for the operator's approval.
    server.modes.script.push({ tool: 'write_file', arguments: { path: 'notes.txt', content: 'approved words' } });
    waiting = spawn(process.execPath, [cliBin, 'run', 'write the notes', '--session', sessionId, '--home', dir.path], {
      cwd: home.workspace,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => waiting!.once('exit', resolve));
    const log = new LogReader(home.db);
    const approvalId = await until('the approval', () => log.events(1, 'approval.requested')[0]?.streamId);

    // Process 2: a turn of the same session; its compacted request names the pending approval.
    const asked = await run(['run', 'is anything waiting for me?', '--session', sessionId]);
    expect(asked.code, asked.stderr).toBe(0);
    const system = requestFor(server, 'is anything waiting for me?')!.messages[0]!.content ?? '';
    expect(system).toContain('Summary of the earlier conversation');
    expect(system).toMatch(
      new RegExp(`- pending approvals:\\n {2}- ${approvalId} write_file \\{.*"path":"notes.txt".*\\}: plan mode`),
    );
    expect(system).toContain(`demiurge approvals grant ${approvalId}`);

    // Granted from another process: the waiting turn runs the call once; the approval is used and no longer listed.
    const granted = await run(['approvals', 'grant', approvalId]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(await exited).toBe(0);
    waiting = undefined;
    expect(readFileSync(join(home.workspace, 'notes.txt'), 'utf8')).toBe('approved words');
    const after = await run(['run', 'and now?', '--session', sessionId]);
    expect(after.code, after.stderr).toBe(0);
    expect(requestFor(server, 'and now?')!.messages[0]!.content).toContain('- pending approvals: none');
    expect((await verifyHome(dir.path)).problems).toEqual([]);
  }, 120_000);
});
