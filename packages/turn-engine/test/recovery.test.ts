import { fork } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { RunsCollections, type RunView, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { createFakeProvider, type FakeStep } from '@demiurge/providers';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness, recording } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Runs a turn in a real child process that SIGKILLs itself right after `killOn` commits. */
async function crashingChild(harness: Harness, sessionId: string, text: string, killOn: string, script: FakeStep[]) {
  await harness.store.close();
  const child = fork(
    join(import.meta.dirname, 'fixtures', 'turn-child.mjs'),
    [harness.path, realpathSync(harness.workspace), sessionId, text, killOn, JSON.stringify(script)],
    { stdio: 'inherit' },
  );
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, s) => resolve(s)));
  expect(signal).toBe('SIGKILL');
}

/** Reopens the store in this process as a new host (caches gone), past the dead owner's lease. */
async function newHost(previous: Harness, script: FakeStep[]): Promise<Harness> {
  const next = await openHarness({
    dir: previous.dir,
    path: previous.path,
    owner: 'second-host',
    provider: recording(createFakeProvider({ script })),
  });
  next.clock.set(Date.now() + 3_600_000);
  return next;
}

async function liveRun(harness: Harness): Promise<RunView> {
  const live = await harness.store.projection(runsProjector.name).list<{ runId: string }>(RunsCollections.liveRuns);
  expect(live).toHaveLength(1);
  return (await harness.store.projection(runsProjector.name).get<RunView>(RunsCollections.runs, live[0]!.runId))!;
}

describe('run recovery with real process kills', () => {
  it('owner lease expired: the new owner never re-runs a started non-idempotent call; the model hears it is unknown', async () => {
    const first = await openHarness();
    const { sessionId } = await first.sessions.create({ title: 't', coreId: 'default' });
    const script: FakeStep[] = [
      { tool_calls: [{ name: 'shell', arguments: { command: 'echo ran >> effects.log' } }] },
      { content: 'I could not confirm the write.' },
    ];
    await crashingChild(first, sessionId, 'append a line', 'tool_call.started', script);
    h = await newHost(first, script);
    const run = await liveRun(h);
    expect(run.status).toBe('running');

    const outcome = await h.engine.resume(run.runId);
    expect(outcome.status).toBe('completed');
    expect(existsSync(join(h.workspace, 'effects.log'))).toBe(false); // never executed, never re-executed
    const [call] = await h.store.projection(runsProjector.name).list<ToolCallView>(RunsCollections.toolCalls);
    expect(call).toMatchObject({ tool: 'shell', status: 'unknown', idempotent: false });
    const toolMessage = h.provider.requests[0]!.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toMatch(/outcome unknown.*not idempotent/);
    const types = await h.types();
    expect(types.filter((t) => t === 'run.owner_lease_expired')).toHaveLength(1);
    expect(await h.verify()).toEqual([]);
  });

  it('resume after compaction: a restarted host rebuilds the turn from checkpoint, transcript and tool records', async () => {
    const first = await openHarness();
    const { sessionId } = await first.sessions.create({ title: 't', coreId: 'default' });
    const script: FakeStep[] = [
      { content: 'writing', tool_calls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'v1' } }] },
      { content: 'wrote out.txt' },
    ];
    await crashingChild(first, sessionId, 'write it', 'tool_call.succeeded', script);
    h = await newHost(first, script);
    const run = await liveRun(h);
    expect(run.stage).toBe('tool_result');

    const outcome = await h.engine.resume(run.runId);
    expect(outcome).toMatchObject({ status: 'completed', text: 'wrote out.txt' });
    expect(readFileSync(join(h.workspace, 'out.txt'), 'utf8')).toBe('v1');
    // One provider call (round 2) with the whole transcript: the user input, round 1 and its tool result.
    expect(h.provider.requests).toHaveLength(1);
    const messages = h.provider.requests[0]!.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(messages[2]!.content).toMatch(/out\.txt/);
    expect(await h.verify()).toEqual([]);
  });

  it('buffered completion: a fully recorded model response is finalized without calling the provider again', async () => {
    const first = await openHarness();
    const { sessionId } = await first.sessions.create({ title: 't', coreId: 'default' });
    await crashingChild(first, sessionId, 'say hi', 'turn.model_responded:final', [{ content: 'hi there' }]);
    h = await newHost(first, [{ content: 'a different answer' }]);
    const run = await liveRun(h);

    const outcome = await h.engine.resume(run.runId);
    expect(outcome).toMatchObject({ status: 'completed', text: 'hi there' });
    expect(h.provider.requests).toHaveLength(0);
    const history = await h.sessions.history(sessionId);
    expect(history.map((m) => m.text)).toEqual(['say hi', 'hi there']);
    expect(await h.verify()).toEqual([]);
  });
});
