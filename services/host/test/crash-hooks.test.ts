import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CommitTraceLine, DemiurgeApp, hostTestHooks } from '../src/index.js';

let home: string;
let workspace: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-host-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe('the crash-point hooks a host reads from its environment', () => {
  it('installs nothing when none is set', () => {
    expect(hostTestHooks({})).toEqual({});
  });

  it('refuses a bad value, naming the variable and the expected form', () => {
    expect(() => hostTestHooks({ DEMIURGE_CRASH_AT_COMMIT: '7:during' })).toThrow(
      'environment: DEMIURGE_CRASH_AT_COMMIT: "7:during" is not <n>:<before|after> (e.g. 7:before)',
    );
    expect(() => hostTestHooks({ DEMIURGE_CRASH_AT_COMMIT: '0:before' })).toThrow('DEMIURGE_CRASH_AT_COMMIT');
    expect(() => hostTestHooks({ DEMIURGE_INJECT_BUG: 'lose-everything' })).toThrow(
      'environment: DEMIURGE_INJECT_BUG: unknown bug "lose-everything" (known: ack-before-commit)',
    );
  });

  it("traces each of a real host's commits, numbered, with their positions and event types", async () => {
    const trace = join(home, 'commits.jsonl');
    const app = await DemiurgeApp.start({
      home,
      overrides: { provider: 'fake', workspace },
      env: { DEMIURGE_COMMIT_TRACE: trace },
    });
    try {
      await (await app.submit({ text: 'hello', newSession: true })).outcome;
    } finally {
      await app.close();
    }
    const lines = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as CommitTraceLine);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.map((l) => l.commit)).toEqual(lines.map((_, i) => i + 1));
    expect(
      lines.every((l) => l.phase === 'after' && l.first <= l.last && l.types.length === l.last - l.first + 1),
    ).toBe(true);
    expect(lines.flatMap((l) => l.types)).toContain('turn.completed');
    expect(lines.slice(1).every((l, i) => l.first === lines[i]!.last + 1)).toBe(true);
  });
});
