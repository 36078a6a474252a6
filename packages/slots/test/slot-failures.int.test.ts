import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlotFailedError } from '../src/index.js';
import { ended, type Harness, openHarness, slotEvents, slotRuns, tempCore } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

describe('failures and timeouts', () => {
  it('soft: records slot.failed, drops what the slot staged and goes on; hard: fails the turn', async () => {
    const dir = tempCore(
      { input: ['flaky', 'after'] },
      {
        flaky: {
          phase: 'input',
          yaml: 'failure_policy: soft\n',
          module: "export default (ctx) => { ctx.input.add_context('half'); throw new Error('boom'); };\n",
        },
        after: { phase: 'input', module: "export default (ctx) => ctx.input.add_context('after');\n" },
      },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    const soft = await slots.runInput({ sessionId, turnId: h.ids.next('trn'), rawText: '', history: [] });
    expect(soft.context.map((c) => c.text)).toEqual(['after']);
    expect(soft.runs.map((r) => r.status)).toEqual(['failed', 'finished']);
    expect(ended(await slotEvents(h))[0]!.data).toMatchObject({
      error: { code: 'slot_error', message: 'boom' },
      policy: 'soft',
    });

    const hardDir = tempCore(
      { input: ['fatal', 'after'] },
      {
        fatal: {
          phase: 'input',
          yaml: 'failure_policy: hard\n',
          module: "export default () => { const e = new Error('no database'); e.code = 'db_down'; throw e; };\n",
        },
        after: { phase: 'input', module: "export default (ctx) => ctx.input.add_context('after');\n" },
      },
    );
    const hard = await h.runtime(hardDir);
    const error = await hard
      .runInput({ sessionId, turnId: h.ids.next('trn'), rawText: '', history: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlotFailedError);
    expect(error).toMatchObject({
      code: 'slot_failed',
      slotId: 'fatal',
      phase: 'input',
      outcome: 'failed',
      error: { code: 'db_down', message: 'no database' },
      message: 'input slot fatal failed (hard): no database',
    });
    expect((error as SlotFailedError).cause).toBeInstanceOf(Error);
    const started = (await slotEvents(h))
      .filter((e) => e.type === 'slot.started')
      .map((e) => (e.data as { slotId: string }).slotId);
    expect(started).toEqual(['flaky', 'after', 'fatal']); // `after` did not run after the hard failure
    expect(ended(await slotEvents(h)).at(-1)!.data).toMatchObject({ policy: 'hard' });
  });

  it('enforces timeout_seconds: the slot is abandoned, ctx.signal aborts and later calls are refused', async () => {
    const dir = tempCore(
      { input: ['stuck', 'after'] },
      {
        stuck: {
          phase: 'input',
          yaml: 'timeout_seconds: 1\n',
          module: [
            'export default async (ctx) => {',
            '  await new Promise((resolve) => {',
            "    ctx.signal.addEventListener('abort', () => {",
            "      ctx.log('aborted: ' + ctx.signal.reason.name);",
            '      setTimeout(resolve, 20);',
            '    });',
            '  });',
            "  ctx.input.add_context('too late');",
            '};',
            '',
          ].join('\n'),
        },
        after: { phase: 'input', module: "export default (ctx) => ctx.input.add_context('after');\n" },
      },
    );
    const slots = await h.runtime(dir);
    const began = Date.now();
    const out = await slots.runInput({
      sessionId: await h.session(),
      turnId: h.ids.next('trn'),
      rawText: '',
      history: [],
    });
    const took = Date.now() - began;
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(5000);
    expect(out.runs.map((r) => r.status)).toEqual(['timed_out', 'finished']);
    expect(out.context.map((c) => c.text)).toEqual(['after']);
    expect(ended(await slotEvents(h))[0]).toMatchObject({
      type: 'slot.timed_out',
      data: { timeoutSeconds: 1, policy: 'soft' },
    });
    expect((await slotRuns(h))[0]).toMatchObject({ status: 'timed_out', policy: 'soft' });
    // The abandoned slot went on after its abort: its late call was refused, and reported as a late error.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(h.logs.map((l) => [l.level, l.text])).toEqual([
      ['info', 'aborted: TimeoutError'],
      [
        'error',
        'after its timeout: slot stuck: ctx.input.add_context is not allowed: the slot run has ended (it returned, failed or timed out)',
      ],
    ]);
  });

  it('fails the turn when a hard slot times out', async () => {
    const dir = tempCore(
      { output: ['slow'] },
      {
        slow: {
          phase: 'output',
          yaml: 'timeout_seconds: 0.2\nfailure_policy: hard\n',
          module: 'export default () => new Promise(() => {});\n',
        },
      },
    );
    const slots = await h.runtime(dir);
    const error = await slots
      .runOutput({ sessionId: await h.session(), turnId: h.ids.next('trn'), responseText: 'r' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'SlotFailedError',
      outcome: 'timed_out',
      message: 'output slot slow timed out (hard): slow ran past its timeout of 0.2s',
    });
  });
});
