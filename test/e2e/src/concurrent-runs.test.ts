import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, demiurge, tempHome } from './cli.js';
import { writeHostHome } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.remove());

/** Four `demiurge run` processes started at once on the home (no server: each hosts in-process). */
function fourRuns(tag: string, extra: string[] = []): Promise<CliResult[]> {
  return Promise.all(
    [1, 2, 3, 4].map((i) => demiurge(['run', `${tag} ${i}`, '--json', '--home', home.path, ...extra])),
  );
}

function expectAllAnswered(runs: CliResult[]): { sessionId: string }[] {
  for (const run of runs) {
    expect(run.stderr).not.toMatch(/version|unexpected/);
    expect(run.code, run.stderr).toBe(0);
  }
  const replies = runs.map((r) => JSON.parse(r.stdout) as { sessionId: string; status: string; text: string });
  expect(replies.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  return replies;
}

describe('concurrent run processes on one home', () => {
  it('four runs on a fresh home, then on its existing session, all succeed (conflicts are retried)', async () => {
    // Each turn takes several model rounds (tool calls), so the four turns overlap on the session stream.
    const listing = { tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] };
    const ws = writeHostHome(home.path, { script: [listing, listing, listing, { content: 'listed' }] });
    const first = expectAllAnswered(await fourRuns('fresh', ['--workspace', ws]));
    // Every run without --session continues the home's one operator session.
    expect(new Set(first.map((r) => r.sessionId)).size).toBe(1);
    const sessionId = first[0]!.sessionId;
    for (const round of ['again', 'more']) {
      const replies = expectAllAnswered(await fourRuns(round, ['--session', sessionId, '--workspace', ws]));
      expect(replies.every((r) => r.sessionId === sessionId)).toBe(true);
    }
    const verify = await demiurge(['verify', '--home', home.path]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);
});
