import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlotFailedError } from '../src/index.js';
import { type Harness, openHarness, tempCore, tempDir } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

describe('bootstrap', () => {
  const bootstrapCore = (
    module = "export default async (ctx) => { await ctx.output.send_text('welcome'); };\n",
    yaml = '',
  ) => tempCore({ bootstrap: ['welcome'] }, { welcome: { phase: 'bootstrap', yaml, module } });

  it('runs once per session', async () => {
    const slots = await h.runtime(bootstrapCore());
    const first = await h.session();
    const second = await h.session();
    expect((await slots.runBootstrap({ sessionId: first })).runs.map((r) => r.status)).toEqual(['finished']);
    expect(await slots.runBootstrap({ sessionId: first })).toEqual({ runs: [], skipped: ['welcome'] });
    expect((await slots.runBootstrap({ sessionId: second })).runs).toHaveLength(1);
    // A new runtime (a restart) reads the record from the log's projection.
    const again = await h.runtime(slots.core);
    expect((await again.runBootstrap({ sessionId: first })).skipped).toEqual(['welcome']);
    expect((await h.store.readAll()).filter((e) => e.type === 'message.recorded')).toHaveLength(2);
  });

  it('runs once when two runtimes (two hosts) bootstrap the same session at the same time', async () => {
    // Slow enough that the second host decides while the first one's run is still going.
    const dir = bootstrapCore(
      "export default async (ctx) => { await new Promise((r) => setTimeout(r, 300)); await ctx.output.send_text('welcome'); };\n",
    );
    const [a, b] = [await h.runtime(dir), await h.runtime(dir)];
    const sessionId = await h.session();
    const outcomes = await Promise.all([a.runBootstrap({ sessionId }), b.runBootstrap({ sessionId })]);
    expect(outcomes.flatMap((o) => o.runs.map((r) => r.status))).toEqual(['finished']);
    expect(outcomes.flatMap((o) => o.skipped)).toEqual(['welcome']);
    expect(await h.types((t) => t === 'slot.started' || t === 'message.recorded')).toEqual([
      'slot.started',
      'message.recorded',
    ]);
  });

  it('skips a bootstrap run another host has open, and runs again once that run is past its timeout', async () => {
    const slow = bootstrapCore(
      "export default async (ctx) => { await new Promise((r) => setTimeout(r, 200)); await ctx.output.send_text('welcome'); };\n",
      'timeout_seconds: 10\n',
    );
    const [a, b] = [await h.runtime(slow), await h.runtime(slow)];
    const sessionId = await h.session();
    const first = a.runBootstrap({ sessionId });
    while ((await h.types((t) => t === 'slot.started')).length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(await b.runBootstrap({ sessionId })).toEqual({ runs: [], skipped: ['welcome'] });
    expect((await first).runs.map((r) => r.status)).toEqual(['finished']);

    // A host that crashed mid-run leaves it open: skipped within its timeout, run again after it.
    const crashed = await h.session();
    const slotRunId = h.ids.next('slr');
    await h.store.append({
      streamType: 'slot_run',
      streamId: slotRunId,
      expectedVersion: 'no_stream',
      events: [
        {
          type: 'slot.started',
          data: {
            slotRunId,
            sessionId: crashed,
            coreId: 'test',
            slotId: 'welcome',
            phase: 'bootstrap',
            mode: 'serial',
          },
        },
      ],
    });
    h.clock.advance(9_000);
    expect((await b.runBootstrap({ sessionId: crashed })).skipped).toEqual(['welcome']);
    h.clock.advance(10_000);
    expect((await b.runBootstrap({ sessionId: crashed })).runs.map((r) => r.status)).toEqual(['finished']);
  });

  it('runs again after a hard failure, not after a soft one', async () => {
    const marker = tempDir();
    const module = `import { existsSync, writeFileSync } from 'node:fs';\nexport default () => { if (!existsSync('${marker}/tried')) { writeFileSync('${marker}/tried', ''); throw new Error('first time'); } };\n`;
    const hard = await h.runtime(bootstrapCore(module, 'failure_policy: hard\n'));
    const sessionId = await h.session();
    await expect(hard.runBootstrap({ sessionId })).rejects.toBeInstanceOf(SlotFailedError);
    expect((await hard.runBootstrap({ sessionId })).runs.map((r) => r.status)).toEqual(['finished']);
    expect((await hard.runBootstrap({ sessionId })).skipped).toEqual(['welcome']);

    const soft = await h.runtime(bootstrapCore("export default () => { throw new Error('never works'); };\n"));
    const other = await h.session();
    expect((await soft.runBootstrap({ sessionId: other })).runs.map((r) => r.status)).toEqual(['failed']);
    expect((await soft.runBootstrap({ sessionId: other })).skipped).toEqual(['welcome']);
  });

  it('finds the record in the log when the store does not run the slot-runs projector', async () => {
    await h.close();
    h = await openHarness({ slotProjector: false });
    const slots = await h.runtime(bootstrapCore());
    const sessionId = await h.session();
    await slots.runBootstrap({ sessionId });
    expect(await slots.runBootstrap({ sessionId })).toEqual({ runs: [], skipped: ['welcome'] });
    expect(await h.types((t) => t === 'slot.started')).toHaveLength(1);
  });
});
