import { afterEach, describe, expect, it } from 'vitest';
import { pinnedContext } from '../src/engine/model-context.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const write = { name: 'write_file', arguments: { path: 'notes.md', content: 'the notes' } };

describe('pending approvals in the pinned context of a compacted request', () => {
  it('names a requested approval (call, arguments, how to answer) while its run waits; not once the run ended', async () => {
    h = await openHarness({ script: [{ tool_calls: [write] }, { content: 'done' }], onPlanModeWrite: 'ask' });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    const requested = new Promise<{ approvalId: string; runId: string }>((resolve) => {
      const sub = h!.store.events$.subscribe((event) => {
        if (event.type !== 'approval.requested') return;
        sub.unsubscribe();
        resolve(event.data as { approvalId: string; runId: string });
      });
    });
    const outcome = h.engine.runTurn({ sessionId, text: 'write the notes' });
    const { approvalId, runId } = await requested;
    const deps = (h.engine as unknown as { deps: Parameters<typeof pinnedContext>[0] }).deps;

    const pinned = await pinnedContext(deps, sessionId);
    expect(pinned).toContain('- plan mode: on');
    expect(pinned).toContain(
      `- pending approvals:\n  - ${approvalId} write_file {"content":"the notes","path":"notes.md"}: `,
    );
    expect(pinned).toContain(`[waiting for an operator: demiurge approvals grant ${approvalId} (or deny)]`);

    // Cancelled while it waited: nothing will run on its approval any more, so it expires (no open approval left).
    await h.engine.cancel(runId, 'the user changed their mind');
    expect((await outcome).status).toBe('cancelled');
    expect((await h.approvals.get(approvalId)).status).toBe('expired');
    expect(await h.approvals.listOpen(sessionId)).toEqual([]);
    expect(await pinnedContext(deps, sessionId)).toContain('- pending approvals: none');
  });
});
