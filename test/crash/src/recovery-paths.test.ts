import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, tempDir } from './cli.js';
import type { HistoryResult } from './gateway.js';
import { recordGolden } from './golden-record.js';
import { type FakeStep, writeScript } from './home.js';
import type { LogRow } from './log-reader.js';
import { ServedHome } from './served-home.js';
import { SLOW_OUTPUT_ENV, writeSlowCore } from './slow-core.js';
import { verifyHome } from './store-checks.js';

let served: ServedHome | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await served?.dispose();
  served = undefined;
  for (const c of cleanups.splice(0)) c();
});

/**
 * A call's event types without its process records: a kill right after `tool_call.started` may come before
 * `tool_call.process_started` (the held shell then never runs its command), and a restart records
 * `tool_call.process_stopped` only if the process still ran.
 */
const withoutProcess = (types: string[]) => types.filter((t) => !t.startsWith('tool_call.process_'));

const stepIds = (rows: LogRow[]) => rows.filter((e) => e.type === 'turn.model_responded').map((e) => e.data.stepId);

describe('recovery after a real SIGKILL of demiurge serve', () => {
  it('(c) resume after compaction: the restarted host rebuilds the turn from the log and finishes it, re-running nothing', async () => {
    served = await ServedHome.start({
      script: [
        {
          content: 'Writing the report.',
          tool_calls: [{ name: 'write_file', arguments: { path: 'report.txt', content: 'v1\n' } }],
        },
        { content: 'Checking it slowly.', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 5' } }] },
        { content: 'The report is written.' },
      ],
    });
    const client = await served.gateway();
    const ids = await client.request('operator.submit', { text: 'write the report' });
    const check = await served.toolCall(ids.turn_id, (d) => d.tool === 'shell');
    await served.reader.waitFor(
      'the check to start',
      (e) => e.streamId === check.streamId && e.type === 'tool_call.started',
    );
    expect((await served.stop('SIGKILL')).signal).toBe('SIGKILL');
    expect(stepIds(served.reader.stream(ids.turn_id))).toEqual(['s1', 's2']);
    writeFileSync(join(served.home.workspace, 'report.txt'), 'edited by the user\n'); // a re-run would overwrite it

    await served.restart();
    const end = await served.turnEnd(ids.turn_id);
    expect(end.type).toBe('turn.completed');
    // Round 3 of the script: the provider saw both recorded rounds; s1 and s2 were not asked for again.
    expect(stepIds(served.reader.stream(ids.turn_id))).toEqual(['s1', 's2', 's3']);
    const write = await served.toolCall(ids.turn_id, (d) => d.tool === 'write_file');
    expect(served.types(write.streamId)).toEqual(['tool_call.requested', 'tool_call.started', 'tool_call.succeeded']);
    expect(served.workspaceFile('report.txt')).toBe('edited by the user\n');
    expect(withoutProcess(served.types(check.streamId))).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.unknown',
    ]);
    const reader = await served.gateway();
    const history = (await reader.request('operator.history', { session_id: ids.session_id })) as HistoryResult;
    expect(history.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'write the report'],
      ['assistant', 'The report is written.'],
    ]);
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
    await recordGolden('crash-run-recovery', served.home.dir);
  });

  it("(e) a second host process recovers the dead owner's run without running its non-idempotent call again", async () => {
    const appending: FakeStep = {
      content: 'Appending a line.',
      tool_calls: [{ name: 'shell', arguments: { command: 'echo ran >> effects.log; sleep 5' } }],
    };
    const unsure: FakeStep = { content: 'I could not confirm the append.' };
    served = await ServedHome.start({ script: [appending, unsure] });
    const client = await served.gateway();
    const ids = await client.request('operator.submit', { text: 'append a line' });
    const call = await served.toolCall(ids.turn_id, (d) => d.tool === 'shell');
    await served.reader.waitFor(
      'the append to start',
      (e) => e.streamId === call.streamId && e.type === 'tool_call.started',
    );
    const effects = join(served.home.workspace, 'effects.log');
    for (let i = 0; i < 200 && !existsSync(effects); i++) await new Promise((r) => setTimeout(r, 25));
    const deadOwner = served.host.ready.owner;
    await served.stop('SIGKILL');
    expect(readFileSync(effects, 'utf8')).toBe('ran\n');

    // The second host: `demiurge run` in its own process on the same store (no gateway is serving). Its own
    // new session would start at step 0: make that a plain answer, so any second line is a re-run.
    writeScript(served.home.dir, [{ content: 'Hello from the second host.' }, unsure]);
    const second = await demiurge(['run', 'anything else?', '--json', '--home', served.home.dir], {
      cwd: served.home.workspace,
    });
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(JSON.parse(second.stdout)).toMatchObject({ status: 'completed', text: 'Hello from the second host.' });

    const end = await served.turnEnd(ids.turn_id, 5_000);
    expect(end.type).toBe('turn.completed');
    expect(served.types(call.streamId)).toContain('tool_call.process_started'); // it ran: effects.log says so
    expect(withoutProcess(served.types(call.streamId))).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.unknown',
    ]);
    expect(readFileSync(effects, 'utf8')).toBe('ran\n');
    const run = served.reader.stream(ids.run_id);
    const claims = run.filter((e) => e.type === 'run.owner_claimed').map((e) => e.data.owner);
    expect(claims).toHaveLength(2);
    expect(claims[0]).toBe(deadOwner);
    expect(claims[1]).not.toBe(deadOwner);
    // The dead owner's lease is ended in the log before the second host claims the run.
    const expired = run.findIndex((e) => e.type === 'run.owner_lease_expired' && e.data.owner === deadOwner);
    expect(expired).toBeGreaterThan(0);
    expect(expired).toBeLessThan(run.findLastIndex((e) => e.type === 'run.owner_claimed'));
    expect(run.at(-1)!.type).toBe('run.completed');
    const answer = served.reader
      .events(1, 'message.recorded')
      .find((e) => e.data.turnId === ids.turn_id && e.data.role === 'assistant');
    expect(answer?.data.text).toBe('I could not confirm the append.');
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
    await recordGolden('crash-run-takeover', served.home.dir);
  });

  it('(f) buffered completion: a final round recorded before the kill is finalized with its text, no provider call', async () => {
    const core = tempDir('demiurge-slow-core-');
    cleanups.push(core.remove);
    served = await ServedHome.start(
      {
        script: [{ content: 'The recorded answer.' }, { content: 'A different answer.' }],
        core: writeSlowCore(join(core.path, 'core')),
      },
      { [SLOW_OUTPUT_ENV]: '5000' },
    );
    const client = await served.gateway();
    const ids = await client.request('operator.submit', { text: 'say something' });
    const final = await served.reader.waitFor(
      'the final model round',
      (e) => e.streamId === ids.turn_id && e.type === 'turn.model_responded',
    );
    expect(final.data).toMatchObject({ content: 'The recorded answer.', toolCalls: [] });
    await served.stop('SIGKILL');
    expect(served.types(ids.turn_id)).toEqual(['turn.started', 'turn.model_responded']);

    await served.restart({ [SLOW_OUTPUT_ENV]: '0' });
    const end = await served.turnEnd(ids.turn_id);
    expect(end.type).toBe('turn.completed');
    expect(served.types(ids.turn_id)).toEqual(['turn.started', 'turn.model_responded', 'turn.completed']);
    const reader = await served.gateway();
    const history = (await reader.request('operator.history', { session_id: ids.session_id })) as HistoryResult;
    expect(history.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'say something'],
      ['assistant', 'The recorded answer.'],
    ]);
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
  });
});
