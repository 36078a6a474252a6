import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './cli.js';
import type { HistoryResult } from './gateway.js';
import { recordGolden } from './golden-record.js';
import type { LogRow } from './log-reader.js';
import { ServedHome } from './served-home.js';
import { SLOW_OUTPUT_ENV, writeSlowCore } from './slow-core.js';
import { verifyHome } from './store-checks.js';

/** The environment variable the `slow_notice` input slot reads: how long it holds a notice turn back (ms). */
const SLOW_NOTICE_ENV = 'CRASH_SLOW_NOTICE_MS';

/**
 * The slow core (`slow_output` before `base_output`) plus a serial input slot, `slow_notice`, that holds a
 * turn whose input is a task notice (`[task …`) for `CRASH_SLOW_NOTICE_MS` before it is admitted: a moment
 * between a task's end and its completion turn's admission that a test can kill the host in.
 */
function writeNoticeCore(dir: string): string {
  writeSlowCore(dir);
  const slot = join(dir, 'input', 'slow_notice');
  mkdirSync(slot, { recursive: true });
  writeFileSync(
    join(slot, 'slot.yaml'),
    [
      'entrypoint: module.mjs',
      'description: Holds a notice turn back before its admission (crash tests).',
      'timeout_seconds: 90',
      'failure_policy: hard',
      'history_policy: transient',
      'capabilities: []',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(slot, 'module.mjs'),
    [
      'export default async function slowNotice(ctx) {',
      "  if (!ctx.input.raw_text.startsWith('[task ')) return;",
      `  const ms = Number(process.env.${SLOW_NOTICE_ENV} ?? 0);`,
      '  await new Promise((resolve) => setTimeout(resolve, ms));',
      '}',
      '',
    ].join('\n'),
  );
  const pipelines = join(dir, 'pipelines.yaml');
  const text = readFileSync(pipelines, 'utf8');
  const slowed = text.replace(/^( {2}serial: \[)(base_input)/m, '$1slow_notice, $2');
  if (slowed === text) throw new Error(`cannot find the input serial list in ${pipelines}`);
  writeFileSync(pipelines, slowed);
  return dir;
}

let served: ServedHome | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await served?.dispose();
  served = undefined;
  for (const c of cleanups.splice(0)) c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('completion turns on a real host, across SIGKILL', () => {
  it("a delegated task's completion turn happens exactly once: killed before its admission, then after it", async () => {
    const core = tempDir('demiurge-notice-core-');
    cleanups.push(core.remove);
    served = await ServedHome.start(
      {
        script: [
          { content: 'Hi.' },
          { content: 'Delegating.', tool_calls: [{ name: 'delegate_task', arguments: { goal: 'say hi' } }] },
        ],
        core: writeNoticeCore(join(core.path, 'core')),
      },
      { [SLOW_NOTICE_ENV]: '60000', [SLOW_OUTPUT_ENV]: '0' },
    );
    const home = served;
    const client = await home.gateway();
    const first = await client.request('operator.submit', { text: 'hello' });
    expect((await home.turnEnd(first.turn_id)).type).toBe('turn.completed');
    const sessionId = first.session_id;
    const second = await client.request('operator.submit', { session_id: sessionId, text: 'delegate it' });
    expect((await home.turnEnd(second.turn_id)).type).toBe('turn.completed');
    const submitted = await home.reader.waitFor(
      'the delegated task',
      (e) => e.type === 'task.submitted' && e.data.sessionId === sessionId,
    );
    const taskId = submitted.streamId;
    const turnsOf = () =>
      home.reader.events(1, 'turn.started').filter((e) => e.data.sessionId === sessionId) as LogRow[];
    const acks = () => home.reader.stream(taskId).filter((e) => e.type === 'task.completion_acknowledged');

    // 1. The task ended; its completion turn is held in its input slot, before its admission: kill the host.
    await home.reader.waitFor(
      'the completion notice',
      (e) => e.streamId === taskId && e.type === 'task.completion_ready',
    );
    await home.reader.waitFor(
      'the completion turn to reach its input slot',
      (e) => e.type === 'slot.started' && e.data.slotId === 'slow_notice',
      { from: submitted.position },
    );
    expect((await home.stop('SIGKILL')).signal).toBe('SIGKILL');
    expect(acks()).toEqual([]);
    expect(turnsOf()).toHaveLength(2);

    // 2. The next host delivers it: the completion turn is admitted with its acknowledgement, then held in its
    //    output slot: kill that host too.
    await home.restart({ [SLOW_NOTICE_ENV]: '0', [SLOW_OUTPUT_ENV]: '60000' });
    const completionTurn = await home.reader.waitFor(
      'the completion turn',
      (e) =>
        e.type === 'turn.started' &&
        e.data.sessionId === sessionId &&
        e.streamId !== second.turn_id &&
        e.streamId !== first.turn_id,
    );
    await home.reader.waitFor(
      'the completion turn to reach its output slot',
      (e) => e.type === 'slot.started' && e.data.slotId === 'slow_output' && e.data.turnId === completionTurn.streamId,
      { from: completionTurn.position },
    );
    await home.stop('SIGKILL');
    expect(acks()).toHaveLength(1);
    expect(turnsOf()).toHaveLength(3);
    // The acknowledgement is in the commit that admitted the turn (one append: one meta, adjacent positions).
    const ack = acks()[0]!;
    const meta = (position: number) =>
      home.reader.meta(position) as { turnId?: string; actor: { kind: string; id: string } };
    expect(meta(ack.position)).toMatchObject({
      turnId: completionTurn.streamId,
      actor: { kind: 'system', id: 'completion-notices' },
    });
    expect(Math.abs(ack.position - completionTurn.position)).toBeLessThan(10);
    expect(ack.data.consumer).toBe(`session ${sessionId} (turn ${completionTurn.streamId})`);

    // 3. A third host resumes the admitted completion turn as a normal run and finishes it; nothing is told twice.
    await home.restart({ [SLOW_NOTICE_ENV]: '0', [SLOW_OUTPUT_ENV]: '0' });
    expect((await home.turnEnd(completionTurn.streamId)).type).toBe('turn.completed');
    await sleep(2_000);
    expect(acks()).toHaveLength(1);
    expect(turnsOf().map((e) => e.streamId)).toEqual([first.turn_id, second.turn_id, completionTurn.streamId]);
    const reader = await home.gateway();
    const history = (await reader.request('operator.history', { session_id: sessionId })) as HistoryResult;
    const ofTurn = history.messages.filter((m) => m.turn_id === completionTurn.streamId);
    expect(ofTurn.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(ofTurn[0]!.text).toMatch(
      new RegExp(`^\\[task completion\\] Task ${taskId} ".+" \\(agent.spawn\\) completed\\.`),
    );
    expect(ofTurn[0]!.text).toContain('Summary: Hi.');
    expect(ofTurn[1]!.text).toBe(`[fake] ${ofTurn[0]!.text}`);
    expect(await verifyHome(home.home.dir)).toMatchObject({ ok: true, problems: [] });
    await recordGolden('crash-completion-turn', home.home.dir);
  });

  it('a busy parent takes the notice with its next input, not a turn of its own; a silent task tells nobody', async () => {
    served = await ServedHome.start({
      script: [
        {
          content: 'Building in the background while I check something.',
          tool_calls: [
            { name: 'shell', arguments: { command: 'echo built', background: true } },
            // The child replays this step (its own transcript is empty): with read_file only, its calls are refused.
            { name: 'delegate_task', arguments: { goal: 'say hi', notify_policy: 'silent', tools: ['read_file'] } },
            { name: 'shell', arguments: { command: 'sleep 4' } },
          ],
        },
        { content: 'Started the build.' },
      ],
    });
    const home = served;
    const first = await (await home.gateway()).request('operator.submit', { text: 'build it' });
    const sessionId = first.session_id;
    const ended = (kind: string) =>
      home.reader.waitFor(`the ${kind} task to end`, (e) => {
        if (e.type !== 'task.completed' && e.type !== 'task.failed') return false;
        const submitted = home.reader.stream(e.streamId)[0]!;
        return submitted.data.sessionId === sessionId && submitted.data.kind === kind;
      });
    const build = await ended('terminal.exec');
    const child = await ended('agent.spawn');
    expect(home.types(first.turn_id).at(-1)).not.toBe('turn.completed'); // still in its foreground sleep
    const second = await (await home.gateway()).request('operator.submit', {
      session_id: sessionId,
      text: 'what now?',
    });
    expect((await home.turnEnd(second.turn_id)).type).toBe('turn.completed');
    await sleep(2_000);

    const turns = home.reader.events(1, 'turn.started').filter((e) => e.data.sessionId === sessionId);
    expect(turns.map((e) => e.streamId)).toEqual([first.turn_id, second.turn_id]);
    const context = (turns[1]!.data.context ?? []) as { role: string; text: string }[];
    const notices = context.filter((c) => c.text.startsWith('[task'));
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toContain(`Task ${build.streamId} "echo built" (terminal.exec) completed.`);
    expect(home.reader.stream(build.streamId).filter((e) => e.type === 'task.completion_acknowledged')).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ consumer: `session ${sessionId} (turn ${second.turn_id})` }),
      }),
    ]);
    // notify_policy silent: no notice, no ack, no turn.
    expect(home.types(child.streamId).filter((t) => t.startsWith('task.completion'))).toEqual([]);
    expect(await verifyHome(home.home.dir)).toMatchObject({ ok: true, problems: [] });
  });
});
