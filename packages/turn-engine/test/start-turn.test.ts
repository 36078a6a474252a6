import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('TurnEngine.startTurn: ids from the caller, no callback', () => {
  it('admits with the run and turn ids the caller generated; admitted resolves once they are committed', async () => {
    h = await openHarness({ script: [{ content: 'hello back' }] });
    const session = await h.sessions.create({ title: 't', coreId: 'default' });
    const runId = 'run_01JD5Y7Q6N00000000000000AA';
    const turnId = 'trn_01JD5Y7Q6N00000000000000AA';
    const { admitted, outcome } = h.engine.startTurn({ sessionId: session.sessionId, text: 'hi', runId, turnId });
    expect(await admitted).toEqual({ sessionId: session.sessionId, runId, turnId });
    expect(await h.store.streamVersion(runId)).toBeGreaterThan(0);
    expect(await h.store.streamVersion(turnId)).toBeGreaterThan(0);
    expect(await outcome).toMatchObject({ status: 'completed', runId, turnId, text: 'hello back' });
  });

  it('opens the session in the admission commit, in plan mode', async () => {
    h = await openHarness({ script: [{ content: 'planned' }] });
    const sessionId = 'ses_01JD5Y7Q6N00000000000000AA';
    const { admitted, outcome } = h.engine.startTurn({
      sessionId,
      text: 'plan it',
      session: { open: { title: 'new', coreId: 'default' }, mode: 'plan' },
    });
    const ids = await admitted;
    expect(ids.sessionId).toBe(sessionId);
    // The admission's part of the session stream (the answer may be recorded after it meanwhile).
    const stream = (await h.store.readStream(sessionId)).slice(0, 3);
    expect(stream.map((e) => e.type)).toEqual(['session.created', 'session.mode_changed', 'message.recorded']);
    expect(new Set(stream.map((e) => e.meta.turnId))).toEqual(new Set([ids.turnId]));
    expect((await h.sessions.get(sessionId)).mode).toBe('plan');
    await outcome;
    expect(await h.verify()).toEqual([]);
  });

  it('a turn that cannot be admitted rejects admitted and outcome alike, naming why', async () => {
    h = await openHarness();
    const { admitted, outcome } = h.engine.startTurn({ sessionId: 'ses_01JD5Y7Q6N00000000000000ZZ', text: 'hi' });
    await expect(admitted).rejects.toThrow(/session/);
    await expect(outcome).rejects.toThrow(/session/);
  });
});
