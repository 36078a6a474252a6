import { writeFileSync } from 'node:fs';
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

const SETUP_TURNS = 8;
const input = (i: number) => `input ${i}: ${'word '.repeat(800).trim()}`;

function configure(home: string, baseUrl: string, window: number): void {
  const lines = [
    'provider:',
    '  name: openai',
    '  model: test-model',
    `  base_url: ${baseUrl}`,
    '  max_retries: 0',
    '  timeout_ms: 600000',
    `  context_window: ${window}`,
    `workspace: ${join(home, 'ws')}`,
    'scheduler:',
    '  enabled: false',
  ];
  writeFileSync(join(home, 'config.yaml'), `${lines.join('\n')}\n`);
}

describe('compaction survives SIGKILL at every step', () => {
  it('killed during the summary request, then after the commit: compacted once, the same request rebuilt, verify holds', async () => {
    dir = tempDir();
    server = await startModelServer();
    const home = writeHome(dir.path, { script: [] });
    configure(dir.path, server.baseUrl, 10_000_000);
    host = await startHost(dir.path, { cwd: home.workspace });
    let sessionId = '';
    for (let i = 1; i <= SETUP_TURNS; i++) {
      const r = await demiurge([
        'run',
        input(i),
        '--json',
        '--home',
        dir.path,
        ...(sessionId ? ['--session', sessionId] : []),
      ]);
      expect(r.code, r.stderr).toBe(0);
      sessionId ||= (JSON.parse(r.stdout) as { sessionId: string }).sessionId;
    }
    await host.stop('SIGKILL');
    // The window: the next request passes 0.8 of it; after a compaction (4 messages kept) it is far below.
    const base = Math.ceil(server.requests[0]!.raw.length / 3.5) - Math.ceil(input(1).length / 3.5);
    const perInput = Math.ceil(input(1).length / 3.5);
    configure(dir.path, server.baseUrl, Math.round((base + 6 * perInput) / 0.8));
    const log = new LogReader(home.db);

    // Step 1: killed while the model writes the summary (nothing recorded yet).
    server.modes.hangCompaction = true;
    host = await startHost(dir.path, { cwd: home.workspace });
    void demiurge(['run', input(SETUP_TURNS + 1), '--home', dir.path, '--session', sessionId]);
    await until('the compaction request', () => server!.requests.find((r) => r.compaction));
    await host.stop('SIGKILL');
    expect(log.events(1, 'session.compacted')).toEqual([]);
    const runId = await until('the live run', () => log.events(1, 'run.started').at(-1)?.streamId);

    // Step 2: the next host resumes the run and compacts again; killed when the model round after it is asked.
    server.modes.hangCompaction = false;
    server.modes.hangTurns = true;
    const asked = server.requests.length;
    host = await startHost(dir.path, { cwd: home.workspace });
    const hung = await until('the model round after the compaction', () =>
      server!.requests.slice(asked).find((r) => !r.compaction),
    );
    await host.stop('SIGKILL');
    const compacted = log.events(1, 'session.compacted');
    expect(compacted).toHaveLength(1);
    expect(compacted[0]!.data).toMatchObject({ trigger: 'auto', runId, compactionId: 'cmp_1' });
    // One commit: the run checkpoint of stage `compaction` sits next to it.
    const near = log.events(compacted[0]!.position - 1).slice(0, 3);
    expect(near.some((e) => e.type === 'run.checkpointed' && e.data.stage === 'compaction')).toBe(true);
    expect(hung.messages[0]!.content).toContain('Summary of the earlier conversation');
    expect(server.requests.filter((r) => r.compaction)).toHaveLength(2);

    // Step 3: the next host rebuilds the exact request from the log, asks no second summary, and finishes.
    server.modes.hangTurns = false;
    const before = server.requests.length;
    host = await startHost(dir.path, { cwd: home.workspace });
    await until('the turn to complete', () =>
      log.events(compacted[0]!.position, 'turn.completed').length > 0 ? true : undefined,
    );
    const again = server.requests.slice(before);
    expect(again.filter((r) => r.compaction)).toEqual([]);
    expect(again[0]!.messages).toEqual(hung.messages);
    expect(log.events(1, 'session.compacted')).toHaveLength(1);
    await host.stop('SIGTERM');
    host = undefined;
    const verified = await verifyHome(dir.path);
    expect(verified.problems).toEqual([]);
    const shown = await demiurge(['sessions', 'show', sessionId, '--home', dir.path]);
    expect(shown.stdout).toContain('── compacted cmp_1 (auto in');
  });
});
