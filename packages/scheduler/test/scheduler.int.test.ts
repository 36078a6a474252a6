import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerProjectorMissingError } from '../src/index.js';
import { CORE, eventTypes, expectCleanLog, openEnv, type SchedulerEnv } from './harness.js';

let env: SchedulerEnv;
afterEach(() => env?.dispose());

const DAILY = 'cron: "0 9 * * *"\ntimezone: UTC\nprompt: Write the morning digest.\n';

describe('SchedulerRuntime: a due time fires once', () => {
  it('a new schedule does not fire for the past: it records its next due time', async () => {
    env = await openEnv({ start: '2026-05-01T10:00:00Z' });
    env.write('digest', DAILY);
    const { tick, fired } = await env.cycle();
    expect(fired).toEqual([]);
    expect(tick.entries).toEqual([
      expect.objectContaining({ scheduleId: 'digest', dueAt: '2026-05-02T09:00:00.000Z', action: 'scheduled' }),
    ]);
    expect((await env.cycle()).tick.entries).toEqual([]);
    expect(await env.scheduler.history('digest')).toEqual([
      expect.objectContaining({ dueAt: '2026-05-02T09:00:00.000Z', status: 'scheduled', workId: null }),
    ]);
    expect(await env.scheduler.upcoming(2)).toEqual([
      expect.objectContaining({
        scheduleId: 'digest',
        enabled: true,
        next: [
          { dueAt: '2026-05-02T09:00:00.000Z', local: '2026-05-02 09:00:00' },
          { dueAt: '2026-05-03T09:00:00.000Z', local: '2026-05-03 09:00:00' },
        ],
      }),
    ]);
    await expectCleanLog(env.store);
  });

  it('fires with a fresh session and a schedule.fire task on the task board, then completes the instance', async () => {
    env = await openEnv({ start: '2026-05-01T10:00:00Z' });
    env.write('digest', DAILY);
    await env.cycle();
    env.clock.set(Date.parse('2026-05-02T09:00:20Z'));
    const first = await env.scheduler.tick();
    expect(first.entries.map((e) => [e.action, e.dueAt])).toEqual([
      ['enqueued', '2026-05-02T09:00:00.000Z'],
      ['scheduled', '2026-05-03T09:00:00.000Z'],
    ]);
    expect((await env.scheduler.tick()).entries).toEqual([]);
    const fired = await env.scheduler.runDue({ limit: 10 });
    expect(fired).toEqual([
      expect.objectContaining({ scheduleId: 'digest', dueAt: '2026-05-02T09:00:00.000Z', outcome: 'completed' }),
    ]);
    expect(await env.scheduler.runDue({ limit: 10 })).toEqual([]);
    const { taskId, sessionId, instanceId, workId } = fired[0]!;

    expect(env.sessions).toEqual([
      {
        sessionId,
        spec: expect.objectContaining({
          coreId: CORE,
          actor: { kind: 'system', id: 'host-a' },
          scheduleId: 'digest',
          dueAt: '2026-05-02T09:00:00.000Z',
          fireKey: 'default/digest/2026-05-02T09:00:00.000Z',
          taskId,
        }),
      },
    ]);
    const task = await env.store.projection('task-board').get('tasks', taskId!);
    expect(task).toMatchObject({
      kind: 'schedule.fire',
      sessionId,
      status: 'created',
      notifyPolicy: 'silent',
      input: {
        coreId: CORE,
        scheduleId: 'digest',
        dueAt: '2026-05-02T09:00:00.000Z',
        prompt: 'Write the morning digest.',
      },
    });
    expect((await env.work.get(workId)).status).toBe('succeeded');
    const [instance] = await env.scheduler.history('digest');
    expect(instance).toMatchObject({ instanceId, status: 'completed', taskId, sessionId, workId, error: null });

    const log = await env.store.readAll();
    const created = log.filter((e) => e.type === 'session.created');
    expect(created.map((e) => e.streamId)).toEqual([sessionId]);
    expect(await eventTypes(env.store, 'schedule_instance.')).toEqual([
      'schedule_instance.scheduled',
      'schedule_instance.scheduled',
      'schedule_instance.claimed',
      'schedule_instance.completed',
    ]);
    // The instance completes, then the work item succeeds, in one commit.
    const completed = log.find((e) => e.type === 'schedule_instance.completed')!;
    const succeeded = log.find((e) => e.type === 'work.succeeded')!;
    expect(succeeded.position).toBe(completed.position + 1);
    expect(succeeded.recordedAt).toBe(completed.recordedAt);
    expect(succeeded.data).toMatchObject({ externalRef: taskId });
    await expectCleanLog(env.store);
  });

  it('a round claims each fire right before it runs: a long fire does not cost the next one its lease', async () => {
    env = await openEnv({
      start: '2026-05-01T08:00:00Z',
      leaseMs: 10_000,
      fire: async (fire) => {
        // The turn outlasts a lease; it renews its own claim meanwhile.
        for (let i = 0; i < 2; i++) {
          env!.clock.advance(6_000);
          await fire.heartbeat();
        }
        return { summary: `ran ${fire.scheduleId}` };
      },
    });
    env.write('digest', DAILY);
    env.write('news', 'cron: "0 9 * * *"\nprompt: The news.\n');
    await env.cycle();
    env.clock.set(Date.parse('2026-05-01T09:00:05Z'));
    const { fired } = await env.cycle();
    // Claimed together, the second fire's claim would have run out while the first ran (a stale claim).
    expect(fired.map((f) => [f.scheduleId, f.outcome, f.attempt]).sort()).toEqual([
      ['digest', 'completed', 1],
      ['news', 'completed', 1],
    ]);
    await expectCleanLog(env.store);
  });

  it('runs the fire callback around the task: started, completed with its summary, or failed', async () => {
    const prompts: string[] = [];
    env = await openEnv({
      start: '2026-05-01T08:00:00Z',
      fire: async (fire) => {
        prompts.push(fire.prompt);
        await fire.heartbeat();
        if (fire.scheduleId === 'broken') throw new Error('provider unavailable');
        return { summary: `ran for ${fire.dueAt}` };
      },
    });
    env.write('digest', DAILY);
    env.write('broken', 'cron: "0 9 * * *"\nprompt: This one fails.\n');
    await env.cycle();
    env.clock.set(Date.parse('2026-05-01T09:00:05Z'));
    const { fired } = await env.cycle();
    expect(prompts.sort()).toEqual(['This one fails.', 'Write the morning digest.']);
    const byId = Object.fromEntries(fired.map((f) => [f.scheduleId, f]));
    expect(byId.digest).toMatchObject({ outcome: 'completed', error: null });
    expect(byId.broken).toMatchObject({
      outcome: 'failed',
      error: { code: 'fire_failed', message: 'provider unavailable' },
    });
    const board = env.store.projection('task-board');
    expect(await board.get('tasks', byId.digest!.taskId!)).toMatchObject({
      status: 'completed',
      summary: 'ran for 2026-05-01T09:00:00.000Z',
      worker: 'host-a',
    });
    expect(await board.get('tasks', byId.broken!.taskId!)).toMatchObject({
      status: 'failed',
      error: { code: 'fire_failed', message: 'provider unavailable' },
    });
    expect((await env.scheduler.history('broken'))[0]).toMatchObject({
      status: 'error',
      error: { code: 'fire_failed', message: 'provider unavailable' },
    });
    expect((await env.work.get(byId.broken!.workId)).status).toBe('failed');
    await expectCleanLog(env.store);
  });

  it('reports invalid files (file and field) and still ticks the valid schedules', async () => {
    env = await openEnv({ start: '2026-05-01T08:00:00Z' });
    env.write('digest', DAILY);
    env.write('bad-cron', 'cron: "0 25 * * *"\nprompt: never\n');
    env.write('bad-zone', 'cron: "0 9 * * *"\ntimezone: Europe/Atlantis\nprompt: never\n');
    const { tick } = await env.cycle();
    expect(tick.schedules).toBe(1);
    expect(tick.errors.map((e) => [e.file, e.field, e.line])).toEqual([
      ['schedules/bad-cron.yaml', 'cron', 1],
      ['schedules/bad-zone.yaml', 'timezone', 2],
    ]);
    expect(tick.entries.map((e) => e.scheduleId)).toEqual(['digest']);
  });

  it('needs the schedule-instances projector in the store', async () => {
    env = await openEnv({ start: '2026-05-01T08:00:00Z' });
    const store = { ...env.store, projectorNames: ['task-board', 'work-items'] } as typeof env.store;
    expect(() => env.runtime({ store })).toThrow(SchedulerProjectorMissingError);
    expect(() => env.runtime({ store })).toThrow(/no "schedule-instances" projector/);
  });
});

describe('SchedulerRuntime: signatures', () => {
  it('an edit starts a new signature; old instances stay readable and a decided fire keeps its definition', async () => {
    env = await openEnv({ start: '2026-05-01T08:00:00Z' });
    env.write('digest', DAILY);
    await env.cycle();
    env.clock.set(Date.parse('2026-05-01T09:00:10Z'));
    await env.cycle(); // fires 05-01 under the first definition
    env.clock.set(Date.parse('2026-05-02T09:00:10Z'));
    await env.scheduler.tick(); // 05-02 is decided (enqueued) under the first definition ...
    env.write('digest', 'cron: "0 9 * * *"\ntimezone: UTC\nprompt: Write the evening digest.\n'); // ... then edited
    const { tick, fired } = await env.cycle();
    expect(tick.entries.map((e) => [e.action, e.dueAt])).toEqual([
      ['superseded', '2026-05-03T09:00:00.000Z'],
      ['scheduled', '2026-05-03T09:00:00.000Z'],
    ]);
    expect(fired.map((f) => [f.dueAt, f.outcome])).toEqual([['2026-05-02T09:00:00.000Z', 'completed']]);
    env.clock.set(Date.parse('2026-05-03T09:00:10Z'));
    expect((await env.cycle()).fired.map((f) => [f.dueAt, f.outcome])).toEqual([
      ['2026-05-03T09:00:00.000Z', 'completed'],
    ]);

    const history = await env.scheduler.history('digest');
    const [oldSig, newSig] = [history[0]!.signature, history.at(-1)!.signature];
    expect(oldSig).not.toBe(newSig);
    expect(
      history.map((v) => [
        v.dueAt.slice(5, 10),
        v.signature === oldSig ? 'old' : 'new',
        v.status,
        v.error?.code ?? null,
      ]),
    ).toEqual([
      ['05-01', 'old', 'completed', null],
      ['05-02', 'old', 'completed', null],
      ['05-03', 'old', 'error', 'superseded'],
      ['05-03', 'new', 'completed', null],
      ['05-04', 'new', 'scheduled', null],
    ]);
    expect(history[1]!.definition!.prompt).toBe('Write the morning digest.');
    expect(history[3]!.definition!.prompt).toBe('Write the evening digest.');
    const inputs = await Promise.all(
      history
        .filter((v) => v.taskId)
        .map(
          async (v) => ((await env.store.projection('task-board').get('tasks', v.taskId!)) as { input: unknown }).input,
        ),
    );
    expect(inputs.map((i) => (i as { prompt: string }).prompt)).toEqual([
      'Write the morning digest.',
      'Write the morning digest.',
      'Write the evening digest.',
    ]);
    // Exactly one work item per due time, whatever the signatures.
    const enqueued = (await env.store.readAll({ types: ['work.enqueued'] })).map(
      (e) => (e.data as { subjectId: string }).subjectId,
    );
    expect(enqueued).toEqual([
      'default/digest/2026-05-01T09:00:00.000Z',
      'default/digest/2026-05-02T09:00:00.000Z',
      'default/digest/2026-05-03T09:00:00.000Z',
    ]);
    // The read model is the log's: rebuilt from scratch, it is the same.
    const live = await env.store.projection('schedule-instances').dump();
    await env.store.rebuild({ projectors: ['schedule-instances'] });
    expect(await env.store.projection('schedule-instances').dump()).toEqual(live);
    await expectCleanLog(env.store);
  });

  it('disabling retires the pending instance; enabling again starts afresh, removing the file retires it', async () => {
    env = await openEnv({ start: '2026-05-01T08:00:00Z' });
    env.write('digest', DAILY);
    await env.cycle();
    env.write('digest', `${DAILY}enabled: false\n`);
    expect((await env.cycle()).tick.entries.map((e) => e.action)).toEqual(['disabled']);
    expect((await env.cycle()).tick.entries).toEqual([]);
    env.clock.set(Date.parse('2026-05-04T12:00:00Z'));
    expect((await env.cycle()).fired).toEqual([]);
    env.write('digest', DAILY);
    const back = await env.cycle();
    expect(back.fired).toEqual([]); // no catch-up for the disabled days
    expect(back.tick.entries.map((e) => [e.action, e.dueAt])).toEqual([['scheduled', '2026-05-05T09:00:00.000Z']]);
    env.remove('digest');
    expect((await env.cycle()).tick.entries.map((e) => [e.action, e.dueAt])).toEqual([
      ['removed', '2026-05-05T09:00:00.000Z'],
    ]);
    env.clock.set(Date.parse('2026-05-07T12:00:00Z'));
    expect((await env.cycle()).tick.entries).toEqual([]);
    expect(await eventTypes(env.store, 'work.')).toEqual([]);
    await expectCleanLog(env.store);
  });
});
