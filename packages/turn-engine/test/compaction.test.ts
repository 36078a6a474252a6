import { isEvent } from '@demiurge/contracts';
import { sessionsReader } from '@demiurge/projector-sessions';
import { createFakeProvider, estimateTokens, type FakeStep } from '@demiurge/providers';
import { afterEach, describe, expect, it } from 'vitest';
import { NothingToCompactError } from '../src/index.js';
import { type Harness, openHarness, recording } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const WINDOW = 4_000;
const TURNS = 14;
const script: FakeStep[] = Array.from({ length: TURNS }, (_, i) => ({ content: `answer ${i + 1} ${'z'.repeat(150)}` }));
const input = (i: number) => `question ${i + 1}: ${'q'.repeat(700)}`;

async function longSession(provider = createFakeProvider({ script })) {
  h = await openHarness({ provider: recording({ ...provider, contextWindow: WINDOW, complete: provider.complete }) });
  const { sessionId } = await h.sessions.create({ title: 'long', coreId: 'default' });
  const answers: string[] = [];
  for (let i = 0; i < TURNS; i++) answers.push((await h.engine.runTurn({ sessionId, text: input(i) })).text);
  return { h, sessionId, answers };
}

describe('context compaction', () => {
  it('a session far longer than the window compacts past the threshold and runs to the end', async () => {
    const { h, sessionId, answers } = await longSession();
    expect(h.provider.requests.some((r) => estimateTokens(r) > WINDOW)).toBe(false);
    // Every answer is the script's, in order: the fake counts the compacted answers as answered.
    expect(answers).toEqual(script.map((s) => s.content));
    const compactions = await sessionsReader(h.store).compactions(sessionId);
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    expect(compactions.map((c) => c.compactionId)).toEqual(compactions.map((_, i) => `cmp_${i + 1}`));
    for (const c of compactions) {
      expect(c.trigger).toBe('auto');
      expect(c.tokens.before).toBeGreaterThan(0.8 * WINDOW);
      expect(c.tokens.after).toBeLessThan(c.tokens.before);
    }
    // A later compaction covers the earlier one: the summary keeps the oldest request.
    expect(compactions.at(-1)!.summary).toContain('question 1:');
    // No turn request reached the window; the model's view was compacted, never the transcript.
    const turnRequests = h.provider.requests.filter((r) => r.purpose !== 'compaction');
    for (const r of turnRequests) expect(estimateTokens(r)).toBeLessThanOrEqual(WINDOW);
    const transcript = await sessionsReader(h.store).transcript(sessionId);
    expect(transcript).toHaveLength(TURNS * 2);
    const last = turnRequests.at(-1)!;
    expect(last.messages[0]!.content).toContain('Summary of the earlier conversation');
    expect(last.messages[0]!.content).toContain('Pinned context (kept across compaction):');
    expect(last.messages[0]!.content).toContain('plan mode: off');
    expect(last.messages.at(-1)).toEqual({ role: 'user', content: input(TURNS - 1) });
    // Each compaction is a step of its run: a checkpoint in the same commit.
    const events = await h.store.readAll();
    for (const e of events.filter((x) => x.type === 'session.compacted')) {
      const sameCommit = events.filter((x) => x.position === e.position - 1 || x.position === e.position + 1);
      expect(sameCommit.some((x) => isEvent(x, 'run.checkpointed') && x.data.stage === 'compaction')).toBe(true);
    }
    expect(await h.verify()).toEqual([]);
  });

  it('a compacted session answers the same request again after a restart (rebuilt from the log)', async () => {
    const { h: first, sessionId } = await longSession();
    const before = first.provider.requests.filter((r) => r.purpose !== 'compaction').at(-1)!;
    await first.store.close();
    const next = await openHarness({
      dir: first.dir,
      path: first.path,
      provider: recording({ ...createFakeProvider({ script }), contextWindow: WINDOW }),
    });
    // The same model view of the last turn, rebuilt by a fresh process from the log alone.
    const turnId = (await sessionsReader(next.store).turns(sessionId)).at(-1)!.turnId;
    const { transcript } = await import('../src/engine/model-context.js');
    const deps = (next.engine as unknown as { deps: Parameters<typeof transcript>[0] }).deps;
    const { loadTurn } = await import('../src/index.js');
    const turn = await loadTurn(next.store, turnId);
    const rebuilt = await transcript(deps, { ...turn, steps: [] });
    expect(rebuilt).toEqual(before.messages);
    await next.store.close();
  });

  it('manual compaction summarizes all but the last messages; a short session has nothing to compact', async () => {
    h = await openHarness({ script });
    const { sessionId } = await h.sessions.create({ title: 'manual', coreId: 'default' });
    await h.engine.runTurn({ sessionId, text: 'one' });
    await h.engine.runTurn({ sessionId, text: 'two' });
    await expect(h.engine.compact(sessionId)).rejects.toBeInstanceOf(NothingToCompactError);
    await h.engine.runTurn({ sessionId, text: 'three' });
    const result = await h.engine.compact(sessionId);
    expect(result).toMatchObject({ compactionId: 'cmp_1', trigger: 'manual', messageCount: 2 });
    expect(result.summary).toBe('[fake summary] requests: one');
    await h.engine.runTurn({ sessionId, text: 'four' });
    const last = h.provider.requests.at(-1)!;
    expect(last.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(last.messages[1]).toEqual({ role: 'user', content: 'two' });
    expect(await h.verify()).toEqual([]);
  });

  it('the pinned context restates plan mode and an open approval; the approval still covers its call after compaction', async () => {
    const write = { path: 'plan.md', content: 'the plan' };
    h = await openHarness({
      script: [
        { content: 'a' },
        { content: 'b' },
        { content: 'c' },
        { tool_calls: [{ name: 'write_file', arguments: write }] },
        { content: 'written' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 'plan', coreId: 'default', mode: 'plan' });
    for (const text of ['one', 'two', 'three']) await h.engine.runTurn({ sessionId, text });
    const approvalId = await h.approvals.preApprove({
      sessionId,
      tool: 'write_file',
      arguments: write,
      reason: 'the user agreed to the plan file',
      actor: { kind: 'operator', id: 'alice' },
      expiresAt: new Date(h.clock.now() + 60_000).toISOString(),
    });
    await h.engine.compact(sessionId);
    const outcome = await h.engine.runTurn({ sessionId, text: 'write the plan' });
    expect(outcome).toMatchObject({ status: 'completed', text: 'written' });
    const first = h.provider.requests.filter((r) => r.purpose !== 'compaction').at(-2)!;
    const system = first.messages[0]!.content;
    expect(system).toContain('- plan mode: on (mutating tools need an approval)');
    expect(system).toContain(
      `- pending approvals:\n  - ${approvalId} write_file {"content":"the plan","path":"plan.md"}: the user agreed to the plan file [granted, not used yet]`,
    );
    expect((await h.approvals.get(approvalId)).status).toBe('consumed');
    expect(await h.verify()).toEqual([]);
  });
});
