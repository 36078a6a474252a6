import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, tempDir, until } from './cli.js';
import { writeHome } from './home.js';
import { type HostProcess, startHost } from './host-process.js';
import { LogReader } from './log-reader.js';
import { type ModelServer, startModelServer } from './model-server.js';
import { verifyHome } from './store-checks.js';

let dir: ReturnType<typeof tempDir> | undefined;
let host: HostProcess | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await host?.stop('SIGKILL');
  await server?.close();
  dir?.remove();
  host = server = dir = undefined;
});

describe('what a compaction must not lose', () => {
  it('detached tasks, plan mode and a pending approval survive a compaction and a SIGKILL restart after it', async () => {
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
    host = await startHost(dir.path, { cwd: home.workspace });
    const run = (args: string[]) => demiurge([...args, '--home', dir!.path]);

    server.modes.script.push(
      { tool: 'shell', arguments: { command: 'sleep 300', background: true } },
      { text: 'started' },
    );
    const first = await run(['run', 'start the long job', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as { sessionId: string }).sessionId;
    const log = new LogReader(home.db);
    const taskId = log.events(1, 'task.submitted')[0]!.streamId;
    for (const text of ['first filler', 'second filler']) {
      expect((await run(['run', text, '--session', sessionId])).code).toBe(0);
    }
    expect((await run(['run', 'from now on, plan first', '--plan', '--session', sessionId])).code).toBe(0);

    const compacted = await run(['sessions', 'compact', sessionId]);
    expect(compacted.code, compacted.stderr).toBe(0);
    expect(compacted.stdout).toContain('compacted (cmp_1)');

    // The next turn's request: the summary, and the pinned context restating plan mode and the open task.
    server.modes.script.push({ tool: 'write_file', arguments: { path: 'notes.txt', content: 'approved words' } });
    const asked = server.requests.length;
    void run(['run', 'write the notes', '--session', sessionId]);
    const approvalId = await until('the approval', () => log.events(1, 'approval.requested')[0]?.streamId);
    const request = server.requests[asked]!;
    const system = request.messages[0]!.content ?? '';
    expect(system).toContain('Summary of the earlier conversation (4 messages compacted');
    expect(system).toContain('- plan mode: on');
    expect(system).toMatch(new RegExp(`- open tasks:\\n  - ${taskId} terminal.exec \\[active\\] sleep 300`));
    expect(request.messages.some((m) => m.content === 'start the long job')).toBe(false);

    // Restart after the compaction: the host is killed while the run waits for the approval.
    await host.stop('SIGKILL');
    host = await startHost(dir.path, { cwd: home.workspace });
    const session = JSON.parse((await run(['sessions', 'show', sessionId, '--json'])).stdout) as {
      session: { mode: string };
      compactions: unknown[];
      transcript: unknown[];
    };
    expect(session.session.mode).toBe('plan');
    expect(session.compactions).toHaveLength(1);
    expect(session.transcript.length).toBeGreaterThanOrEqual(9); // every original message is kept
    const tasks = JSON.parse((await run(['tasks', 'list', '--session', sessionId, '--json'])).stdout) as {
      tasks: { taskId: string }[];
    };
    expect(tasks.tasks.map((t) => t.taskId)).toContain(taskId);
    const approvals = JSON.parse((await run(['approvals', 'list', '--json'])).stdout) as {
      approvals: { approvalId: string; status: string }[];
    };
    expect(approvals.approvals).toEqual([expect.objectContaining({ approvalId, status: 'requested' })]);

    // The approval still works after the compaction and the restart: the call runs once, the turn ends.
    const granted = await run(['approvals', 'grant', approvalId]);
    expect(granted.code, granted.stderr).toBe(0);
    await until('the turn to complete', () => (log.events(1, 'turn.completed').length === 5 ? true : undefined));
    expect(readFileSync(join(home.workspace, 'notes.txt'), 'utf8')).toBe('approved words');
    const writeCall = log.events(1, 'tool_call.requested').find((e) => e.data.tool === 'write_file')!.streamId;
    expect(log.stream(writeCall).filter((e) => e.type === 'tool_call.started')).toHaveLength(1);
    const last = server.requests.at(-1)!.messages[0]!.content ?? '';
    expect(last).toContain('- plan mode: on');
    await host.stop('SIGTERM');
    host = undefined;
    expect((await verifyHome(dir.path)).problems).toEqual([]);
  });
});
