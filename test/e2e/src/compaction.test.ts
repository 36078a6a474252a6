import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliBin, demiurge, tempHome } from './cli.js';
import { type ServeProcess, startServe, writeHostHome } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

const WINDOW = 6_000;
const TURNS = 12;
const input = (i: number) => `request ${i + 1}: ${'lorem ipsum '.repeat(80).trim()}`;

/** Runs `chat --json` with one input per line; the replies, one JSON line each. */
function chat(lines: readonly string[], extra: readonly string[] = []): Promise<{ sessionId: string; text: string }[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, 'chat', '--json', '--home', home.path, ...extra], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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

interface ShownCompaction {
  compactionId: string;
  trigger: string;
  summary: string;
  throughMessageId: string;
  messageCount: number;
  tokens: { before: number; after: number; window: number };
}

async function show(sessionId: string) {
  const r = await demiurge(['sessions', 'show', sessionId, '--json', '--home', home.path]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { transcript: { messageId: string }[]; compactions: ShownCompaction[] };
}

describe('context compaction through the CLI', () => {
  it('a session far longer than the window runs to the end, compacting automatically; show marks it; verify holds', async () => {
    writeHostHome(home.path);
    const config = join(home.path, 'config.yaml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('  name: fake\n', `  name: fake\n  context_window: ${WINDOW}\n`),
    );
    const inputs = Array.from({ length: TURNS }, (_, i) => input(i));
    const replies = await chat(inputs);
    expect(replies).toHaveLength(TURNS);
    // The fake echoes the input: every turn was answered, the last one included.
    expect(replies.at(-1)!.text).toBe(`[fake] ${input(TURNS - 1)}`);
    const sessionId = replies[0]!.sessionId;

    const shown = await show(sessionId);
    expect(shown.transcript).toHaveLength(TURNS * 2); // the transcript keeps every message
    expect(shown.compactions.length).toBeGreaterThanOrEqual(1);
    for (const c of shown.compactions) {
      expect(c.trigger).toBe('auto');
      expect(c.tokens.window).toBe(WINDOW);
      expect(c.tokens.before).toBeGreaterThan(0.8 * WINDOW);
      expect(c.tokens.after).toBeLessThan(c.tokens.before);
      expect(c.summary).toContain('[fake summary] requests: request 1:');
    }
    const text = await demiurge(['sessions', 'show', sessionId, '--home', home.path]);
    expect(text.stdout).toMatch(/── compacted cmp_1 \(auto in run_\w+\): the \d+ messages above are summarized/);
    expect(text.stdout).toContain(`${shown.compactions.length} compactions`);

    const verify = await demiurge(['verify', '--home', home.path]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const rebuild = await demiurge(['rebuild', '--home', home.path]);
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect((await show(sessionId)).compactions).toEqual(shown.compactions);
  });

  it('sessions compact ID: in process, then through a serving host; nothing to compact and an unknown id are clear errors', async () => {
    writeHostHome(home.path);
    const replies = await chat(['one', 'two']);
    const sessionId = replies[0]!.sessionId;
    const none = await demiurge(['sessions', 'compact', sessionId, '--home', home.path]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain(`nothing to compact in session ${sessionId}: the last 4 messages are always kept`);
    expect(none.stderr).not.toMatch(/unexpected/i);

    await chat(['three'], ['--session', sessionId]);
    const manual = await demiurge(['sessions', 'compact', sessionId, '--home', home.path]);
    expect(manual.code, manual.stderr).toBe(0);
    expect(manual.stdout).toContain(`session ${sessionId} compacted (cmp_1)`);
    expect(manual.stdout).toContain('2 messages summarized for the model');
    expect((await show(sessionId)).compactions).toEqual([
      expect.objectContaining({ compactionId: 'cmp_1', trigger: 'manual', summary: '[fake summary] requests: one' }),
    ]);

    serve = await startServe(home.path, `${home.path}/ws`);
    await chat(['four'], ['--session', sessionId]);
    const served = await demiurge(['sessions', 'compact', sessionId, '--json', '--home', home.path]);
    expect(served.code, served.stderr).toBe(0);
    const { compaction } = JSON.parse(served.stdout) as {
      compaction: { compaction_id: string; message_count: number };
    };
    expect(compaction).toMatchObject({ compaction_id: 'cmp_2', message_count: 4 });
    const after = await show(sessionId);
    expect(after.transcript).toHaveLength(8);
    expect(after.compactions.map((c) => c.summary)).toEqual([
      '[fake summary] requests: one',
      '[fake summary] requests: one | two',
    ]);

    const unknown = await demiurge(['sessions', 'compact', 'ses_01JD5Y7Q6N0000000000000009', '--home', home.path]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toBe('demiurge: no session ses_01JD5Y7Q6N0000000000000009\n');
  });
});
