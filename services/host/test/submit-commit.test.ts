import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppendStream } from '@demiurge/event-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DemiurgeApp } from '../src/index.js';

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

/** The event types of each commit (store.append call) that wrote a session, run or turn stream, in order. */
function countCommits(app: DemiurgeApp): string[][] {
  const commits: string[][] = [];
  const store = app.store;
  const append = store.append.bind(store);
  store.append = (async (streams: AppendStream | readonly AppendStream[], options?: never) => {
    const result = await append(streams, options);
    const list = Array.isArray(streams) ? streams : [streams as AppendStream];
    if (!result.replayed && list.some((s) => ['session', 'run', 'turn'].includes(s.streamType))) {
      commits.push(result.events.map((e) => e.type));
    }
    return result;
  }) as typeof store.append;
  return commits;
}

describe('one submit is one commit', () => {
  it('a submit that opens a session in plan mode commits the session, its mode, the input, the run and the turn at once', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {} });
    try {
      const commits = countCommits(app);
      const submitted = await app.submit({ text: 'plan this', newSession: true, plan: true });
      expect(commits).toHaveLength(1);
      expect(commits[0]).toEqual(
        expect.arrayContaining([
          'session.created',
          'session.mode_changed',
          'message.recorded',
          'run.queued',
          'run.started',
          'turn.started',
        ]),
      );
      expect(submitted.runId).toMatch(/^run_/);
      expect(submitted.turnId).toMatch(/^trn_/);
      const session = await app.runtime.sessions.get(submitted.sessionId);
      expect(session).toMatchObject({ mode: 'plan', title: 'plan this', messageCount: expect.any(Number) });
      expect(await submitted.outcome).toMatchObject({ status: 'completed', runId: submitted.runId });
    } finally {
      await app.close();
    }
  });

  it('the channel default session is opened once, in the first submit; a later submit switching plan mode is one commit too', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {} });
    try {
      const commits = countCommits(app);
      const first = await app.submit({ text: 'one', channel: 'cli', conversationKey: 'me', plan: true });
      expect(commits).toHaveLength(1);
      expect(commits[0]).toEqual(expect.arrayContaining(['session.created', 'session.mode_changed', 'turn.started']));
      await first.outcome;
      const before = commits.length;
      const second = await app.submit({ text: 'two', channel: 'cli', conversationKey: 'me', plan: false });
      expect(second.sessionId).toBe(first.sessionId);
      // What the submit wrote of the session, its runs and turns (deliveries of the first answer may interleave).
      const admission = commits
        .slice(before)
        .filter((types) => types.some((t) => t.startsWith('session.') || t === 'run.queued' || t === 'turn.started'));
      expect(admission).toHaveLength(1);
      expect(admission[0]).toEqual(
        expect.arrayContaining(['session.mode_changed', 'message.recorded', 'turn.started']),
      );
      expect(admission[0]).not.toContain('session.created');
      expect((await app.runtime.sessions.get(first.sessionId)).mode).toBe('default');
      await second.outcome;
    } finally {
      await app.close();
    }
  });

  it('two submits racing to open the same channel session get one session: the second joins it, nothing lost', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {} });
    try {
      const [a, b] = await Promise.all([
        app.submit({ text: 'first', channel: 'cli', conversationKey: 'race', plan: true }),
        app.submit({ text: 'second', channel: 'cli', conversationKey: 'race' }),
      ]);
      expect(b.sessionId).toBe(a.sessionId);
      expect(b.runId).not.toBe(a.runId);
      const outcomes = await Promise.all([a.outcome, b.outcome]);
      expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed']);
      const created = await app.store.readAll({ types: ['session.created'] });
      expect(created).toHaveLength(1);
      const texts = (await app.runtime.sessions.history(a.sessionId))
        .filter((m) => m.role === 'user')
        .map((m) => m.text);
      expect(texts.sort()).toEqual(['first', 'second']);
    } finally {
      await app.close();
    }
  });
});
