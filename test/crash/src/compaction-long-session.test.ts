import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliBin, demiurge, tempDir } from './cli.js';
import { writeHome } from './home.js';
import { type HostProcess, startHost } from './host-process.js';
import { LogReader } from './log-reader.js';
import { type ModelServer, type ServedRequest, startModelServer } from './model-server.js';
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

/** Inputs per half of the session (a SIGKILL and a restart between the halves). */
const HALF = 16;
const input = (i: number) => `input ${i}: ${'word '.repeat(260).trim()}`;
/** The documented estimate: 3.5 characters a token. The raw request body (JSON) has more characters than it counts. */
const tokensOfBody = (r: ServedRequest) => Math.ceil(r.raw.length / 3.5);

function configure(home: string, baseUrl: string, window: number): void {
  const lines = [
    'provider:',
    '  name: openai',
    '  model: test-model',
    `  base_url: ${baseUrl}`,
    '  max_retries: 0',
    `  context_window: ${window}`,
    `workspace: ${join(home, 'ws')}`,
    'scheduler:',
    '  enabled: false',
  ];
  writeFileSync(join(home, 'config.yaml'), `${lines.join('\n')}\n`);
}

/** `demiurge chat --json` through the serving host's gateway, one input per line: the replies. */
function chat(
  home: string,
  lines: readonly string[],
  sessionId?: string,
): Promise<{ sessionId: string; text: string }[]> {
  return new Promise((resolve, reject) => {
    const args = [cliBin, 'chat', '--json', '--home', home, ...(sessionId ? ['--session', sessionId] : [])];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`chat exited ${code}: ${err}`));
      resolve(
        out
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { sessionId: string; text: string }),
      );
    });
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

describe('a long session on the OpenAI-compatible path (real HTTP), far past the context window', () => {
  it('compacts repeatedly, no request passes the window, the transcript keeps every message, a SIGKILL restart in the middle', async () => {
    dir = tempDir();
    server = await startModelServer();
    const home = writeHome(dir.path, { script: [] });
    // The size of a request with no history (instructions and tools): measured on one turn with a large window.
    configure(dir.path, server.baseUrl, 10_000_000);
    host = await startHost(dir.path, { cwd: home.workspace });
    const [opening] = await chat(dir.path, [input(0)]);
    const sessionId = opening!.sessionId;
    await host.stop('SIGTERM');
    const base = tokensOfBody(server.requests[0]!) - Math.ceil(input(0).length / 3.5);
    const perTurn = Math.ceil(input(0).length / 3.5) + 10;
    // Room for about three turns of history below the threshold: the whole session is over three windows long.
    const window = Math.round((base + 3 * perTurn) / 0.8);
    configure(dir.path, server.baseUrl, window);
    const first = server.requests.length;

    host = await startHost(dir.path, { cwd: home.workspace });
    const firstHalf = await chat(
      dir.path,
      Array.from({ length: HALF }, (_, i) => input(i + 1)),
      sessionId,
    );
    const log = new LogReader(home.db);
    const compactedBefore = log.events(1, 'session.compacted').length;
    expect(compactedBefore).toBeGreaterThanOrEqual(2);
    await host.stop('SIGKILL');

    // A new host after the kill: the next request is built from the log (the latest compaction and what follows).
    host = await startHost(dir.path, { cwd: home.workspace });
    const resumedAt = server.requests.length;
    const secondHalf = await chat(
      dir.path,
      Array.from({ length: HALF }, (_, i) => input(HALF + i + 1)),
      sessionId,
    );
    const afterRestart = server.requests.slice(resumedAt).find((r) => !r.compaction)!;
    expect(afterRestart.messages[0]!.content).toContain('Summary of the earlier conversation');
    expect(afterRestart.messages.some((m) => m.content === input(1))).toBe(false);
    await host.stop('SIGTERM');
    host = undefined;

    // Every turn was answered by the model server (`ok <n>`), in one session.
    const replies = [...firstHalf, ...secondHalf];
    expect(replies).toHaveLength(2 * HALF);
    for (const r of replies) {
      expect(r.sessionId).toBe(sessionId);
      expect(r.text).toMatch(/^ok \d+$/);
    }

    // Compacted again and again; no request (turn or summary) passed the window: even the raw JSON body is
    // below it, and the longest came close to the threshold (the session did fill the window).
    const compactions = log.events(1, 'session.compacted');
    expect(compactions.length).toBeGreaterThan(compactedBefore);
    expect(compactions.length).toBeGreaterThanOrEqual(5);
    const requests = server.requests.slice(first);
    expect(requests.filter((r) => r.compaction)).toHaveLength(compactions.length);
    const sizes = requests.map(tokensOfBody);
    expect(Math.max(...sizes)).toBeLessThan(window);
    expect(Math.max(...sizes.filter((_, i) => !requests[i]!.compaction))).toBeGreaterThan(window * 0.6);
    // Sent whole, the session would be more than three windows long.
    expect(base + (replies.length + 1) * perTurn).toBeGreaterThan(3 * window);
    for (const c of compactions) {
      const tokens = c.data.tokens as { before: number; after: number; window: number };
      expect(tokens.window).toBe(window);
      expect(tokens.after).toBeLessThan(tokens.before);
      expect(tokens.after).toBeLessThan(window);
    }

    // The transcript keeps every message; show marks the compactions; verify and the rebuild hold.
    const shown = JSON.parse(
      (await demiurge(['sessions', 'show', sessionId, '--json', '--home', dir.path])).stdout,
    ) as {
      transcript: { role: string; text: string }[];
      compactions: unknown[];
    };
    expect(shown.transcript).toHaveLength(2 * (2 * HALF + 1));
    expect(shown.transcript.filter((m) => m.role === 'user').map((m) => m.text)).toEqual(
      Array.from({ length: 2 * HALF + 1 }, (_, i) => input(i)),
    );
    expect(shown.compactions).toHaveLength(compactions.length);
    const verified = await verifyHome(dir.path);
    expect(verified.problems).toEqual([]);
    const rebuilt = await demiurge(['rebuild', '--home', dir.path]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const again = await verifyHome(dir.path);
    expect(again.problems).toEqual([]);
  }, 180_000);
});
