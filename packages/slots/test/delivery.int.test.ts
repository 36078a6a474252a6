import { symlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlotRuntime } from '../src/index.js';
import { type Harness, openHarness, slotRuns, tempCore, tempDir, writeFiles } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

describe('delivery intents', () => {
  it('records send_text as message.recorded, delivery.queued and work.enqueued in one commit, also under concurrent sends', async () => {
    const dir = tempCore(
      { output: ['burst'] },
      {
        burst: {
          phase: 'output',
          module:
            "export default async (ctx) => { await Promise.all([1, 2, 3, 4, 5].map((i) => ctx.output.send_text('part ' + i))); };\n",
        },
      },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    const out = await slots.runOutput({ sessionId, turnId: h.ids.next('trn'), responseText: 'x' });
    expect(out.sends).toHaveLength(5);
    const log = await h.store.readAll();
    for (const send of out.sends) {
      const message = log.find(
        (e) => e.type === 'message.recorded' && (e.data as { messageId: string }).messageId === send.messageId,
      )!;
      const queued = log.find(
        (e) => e.type === 'delivery.queued' && (e.data as { deliveryId: string }).deliveryId === send.deliveryId,
      )!;
      const work = log.find(
        (e) =>
          e.type === 'work.enqueued' &&
          (e.data as { workId: string }).workId === (queued.data as { workId: string }).workId,
      )!;
      const commit = [message, queued, work].sort((a, b) => a.position - b.position);
      // One append: consecutive positions, one commit time, nothing else in between.
      expect(commit[2]!.position - commit[0]!.position).toBe(2);
      expect(new Set(commit.map((e) => e.recordedAt)).size).toBe(1);
      expect((queued.data as { channel: string }).channel).toBe('operator');
    }
    expect(
      log
        .filter((e) => e.type === 'message.recorded')
        .map((e) => (e.data as { text: string }).text)
        .sort(),
    ).toEqual(['part 1', 'part 2', 'part 3', 'part 4', 'part 5']);
  });

  it('records nothing of a send to an archived session, and fails the slot', async () => {
    const dir = tempCore(
      { output: ['send'] },
      { send: { phase: 'output', module: 'export default (ctx) => ctx.output.send_text("late");\n' } },
    );
    const slots = await h.runtime(dir);
    const sessionId = await h.session();
    await h.sessions.archive(sessionId, 'done');
    const out = await slots.runOutput({ sessionId, turnId: h.ids.next('trn'), responseText: 'x' });
    expect(out.runs[0]!.status).toBe('failed');
    expect(
      await h.types((t) => t.startsWith('delivery.') || t === 'work.enqueued' || t === 'message.recorded'),
    ).toEqual([]);
    expect((await slotRuns(h))[0]!.error).toMatchObject({ code: 'illegal_transition' });
  });

  it('sends a file inside the workspace, refuses one outside (also through a symlink)', async () => {
    const workspace = tempDir('demiurge-ws-');
    const outside = tempDir('demiurge-out-');
    writeFiles(workspace, { 'report.txt': 'ok' });
    writeFiles(outside, { 'secret.txt': 'no' });
    symlinkSync(`${outside}/secret.txt`, `${workspace}/link.txt`);
    const dir = tempCore(
      { output: ['files'] },
      {
        files: {
          phase: 'output',
          module: [
            'export default async (ctx) => {',
            "  await ctx.output.send_file('report.txt', { caption: 'the report' });",
            "  await ctx.output.send_file('plain.txt');",
            `  for (const p of ["../${basename(outside)}/secret.txt", "link.txt"]) {`,
            '    try { await ctx.output.send_file(p); } catch (e) { ctx.log(e.name); }',
            '  }',
            '};',
            '',
          ].join('\n'),
        },
      },
    );
    writeFiles(workspace, { 'plain.txt': 'x' });
    const slots = new SlotRuntime({
      store: h.store,
      clock: h.clock,
      ids: h.ids,
      core: (await h.runtime(dir)).core,
      deliver: h.deliver,
      background: h.background,
      workspaceRoot: workspace,
      onLog: (entry) => h.logs.push(entry),
    });
    const out = await slots.runOutput({ sessionId: await h.session(), turnId: h.ids.next('trn'), responseText: 'r' });
    expect(out.sends).toHaveLength(2);
    expect(h.logs.map((l) => l.text)).toEqual(['SlotPathError', 'SlotPathError']);
    const messages = (await h.store.readAll()).filter((e) => e.type === 'message.recorded');
    expect(messages.map((m) => (m.data as { text: string }).text)).toEqual(['the report', '[file: plain.txt]']);
    expect(messages[0]!.meta).toMatchObject({
      attachment: { kind: 'file', name: 'report.txt', path: expect.stringMatching(/report\.txt$/) },
    });
  });
});
