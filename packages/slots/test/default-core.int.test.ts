import { verifyLog } from '@demiurge/lifecycle';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_DIR, type Harness, openHarness, slotRuns } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

describe('SlotRuntime with the default agent/ core', () => {
  it('builds the context from the instructions, sends the response atomically, and audits in the background', async () => {
    const slots = await h.runtime(AGENT_DIR);
    const sessionId = await h.session({ channel: 'webhook', conversationKey: 'room-7' });
    const turnId = h.ids.next('trn');
    const input = await slots.runInput({ sessionId, turnId, rawText: 'what is in the workspace?' });
    expect(input.context).toEqual([
      {
        role: 'system',
        text: slots.core.instructions,
        writeHistory: false,
        visibility: 'model_hidden',
        slotId: 'base_input',
      },
    ]);
    const output = await slots.runOutput({ sessionId, turnId, responseText: 'Three files.', rawText: 'what?' });
    expect(output.responseText).toBe('Three files.');
    expect(output.sends).toHaveLength(1);
    expect(output.started).toEqual(['audit_log']);
    expect((await h.background.drain(5000)).drained).toBe(true);
    expect(h.logs.map((l) => [l.slotId, l.text])).toEqual([
      ['audit_log', `turn ${turnId}: response of 2 words for input of 5 chars`],
    ]);

    const log = await h.store.readAll();
    const message = log.find((e) => e.type === 'message.recorded')!;
    expect(message.data).toMatchObject({ role: 'assistant', text: 'Three files.', turnId, visibility: 'persist' });
    expect(message.meta).toMatchObject({ actor: { kind: 'agent', id: 'default/base_output' }, sessionId, turnId });
    expect(log.find((e) => e.type === 'delivery.queued')!.data).toMatchObject({
      channel: 'webhook',
      conversationKey: 'room-7',
      messageId: output.sends[0]!.messageId,
      deliveryId: output.sends[0]!.deliveryId,
    });
    expect((await slotRuns(h)).map((r) => [r.slotId, r.phase, r.mode, r.status])).toEqual([
      ['base_input', 'input', 'serial', 'finished'],
      ['base_output', 'output', 'serial', 'finished'],
      ['audit_log', 'output', 'parallel', 'finished'],
    ]);
    expect((await h.sessions.history(sessionId)).map((m) => m.text)).toEqual(['Three files.']);
  });

  it('stays valid under every slot machine after a mixed run', async () => {
    const slots = await h.runtime(AGENT_DIR);
    const sessionId = await h.session();
    for (let i = 0; i < 3; i++) {
      const turnId = h.ids.next('trn');
      await slots.runInput({ sessionId, turnId, rawText: `q${i}` });
      await slots.runOutput({ sessionId, turnId, responseText: `a${i}` });
    }
    await h.background.drain(5000);
    const report = await verifyLog(h.store.iterate());
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect((await slotRuns(h)).every((r) => r.status === 'finished')).toBe(true);
  });
});
