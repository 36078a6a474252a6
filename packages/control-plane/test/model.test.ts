import { DemiurgeError } from '@demiurge/contracts';
import { propertySettings } from '@demiurge/contracts/testing';
import type { TaskView } from '@demiurge/projector-task-board';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { StaleClaimError, type WorkClaim } from '../src/index.js';
import { dumpProjections, openRuntime, type Runtime, runsOn, storeKind } from './harness.js';

/** What the model remembers of each item: enough to state the invariants, not to re-implement the machines. */
interface WorkModel {
  readonly workId: string;
  claims: WorkClaim[];
  /** Seen `unknown` and not resolved by an operator since. */
  unknown: boolean;
  final: string | undefined;
}
interface TaskModel {
  readonly taskId: string;
  readonly sessionId: string;
  deleted: boolean;
  final: string | undefined;
}
interface Model {
  readonly work: WorkModel[];
  readonly tasks: TaskModel[];
  readonly sessionId: string;
}

type Cmd = fc.AsyncCommand<Model, Runtime>;
const FINAL_WORK = ['acknowledged', 'failed', 'cancelled', 'corrupt'];

/** Runs an operation that may be refused: a refusal must be typed and must append nothing. */
async function attempt(rt: Runtime, op: () => Promise<unknown>): Promise<boolean> {
  const head = await rt.store.head();
  try {
    await op();
    return true;
  } catch (err) {
    if (!(err instanceof DemiurgeError)) throw err;
    expect(await rt.store.head()).toBe(head);
    return false;
  }
}

const pick = <T>(items: readonly T[], i: number): T | undefined =>
  items.length === 0 ? undefined : items[i % items.length];
const latest = (w: WorkModel) => w.claims[w.claims.length - 1];

function command(label: string, run: (m: Model, rt: Runtime) => Promise<void>): Cmd {
  return {
    check: () => true,
    run: async (m, rt) => {
      await run(m, rt);
      await checkInvariants(m, rt);
    },
    toString: () => label,
  };
}

async function checkInvariants(m: Model, rt: Runtime): Promise<void> {
  for (const w of m.work) {
    const view = await rt.work.get(w.workId);
    const leased = ['claimed', 'running', 'sending'].includes(view.status);
    // At most one live claim token per item: the view holds exactly the latest token issued.
    expect(view.claimToken).toBe(leased ? (latest(w)?.claimToken ?? null) : null);
    // An unknown send stays unknown (never claimed, never re-sent) until an operator resolves it.
    if (w.unknown) expect(view.status).toBe('unknown');
    if (view.status === 'unknown') w.unknown = true;
    // Terminal items are never overwritten.
    if (w.final) expect(view.status).toBe(w.final);
    if (FINAL_WORK.includes(view.status)) w.final = view.status;
  }
  for (const t of m.tasks) {
    const view: TaskView = await rt.tasks.getTask(t);
    if (view.status === 'cancelled') expect(view.lane).not.toBe('active');
    if (view.status === 'deleted') t.deleted = true;
    if (t.deleted) {
      expect(['deleted', 'archived']).toContain(view.status);
      expect(view.hidden).toBe(true);
    }
    if (t.final) expect(view.status).toBe(t.final);
    if (view.status === 'archived') t.final = 'archived';
  }
  const listed = (await rt.tasks.listTasks(m.sessionId)).map((v) => v.taskId);
  for (const t of m.tasks.filter((x) => x.deleted)) expect(listed).not.toContain(t.taskId);
  const live = await dumpProjections(rt.store);
  await rt.store.rebuild();
  expect(await dumpProjections(rt.store)).toEqual(live);
}

const enqueue = command('enqueue', async (m, rt) => {
  const { workId } = await rt.work.enqueue({
    kind: 'task.completion',
    subjectId: `s${m.work.length}`,
    payload: { taskId: `tsk_${String(m.work.length).padStart(26, '0')}` },
  });
  m.work.push({ workId, claims: [], unknown: false, final: undefined });
});
const submitExec = command('submit(terminal.exec)', async (m, rt) => {
  const view = await rt.tasks.submitTask({
    sessionId: m.sessionId,
    kind: 'terminal.exec',
    title: 'exec',
    input: { command: 'true' },
  });
  m.tasks.push({ taskId: view.taskId, sessionId: m.sessionId, deleted: false, final: undefined });
});

const workCommands = [
  fc.constant(enqueue),
  fc.integer({ min: 1, max: 3 }).map((limit) =>
    command(`claimDue(${limit})`, async (m, rt) => {
      for (const claim of await rt.work.claimDue({ limit })) {
        let w = m.work.find((x) => x.workId === claim.workId);
        if (!w) {
          // A completion notice the control plane enqueued when a task ended.
          w = { workId: claim.workId, claims: [], unknown: false, final: undefined };
          m.work.push(w);
        }
        expect(w.claims.map((c) => c.claimToken)).not.toContain(claim.claimToken);
        expect(claim.attempt).toBe((latest(w)?.attempt ?? 0) + 1);
        w.claims.push(claim);
      }
    }),
  ),
  ...(['heartbeat', 'running', 'sending', 'succeed', 'fail', 'retry', 'unknown'] as const).map((op) =>
    fc.nat().map((i) =>
      command(`${op}(${i})`, async (m, rt) => {
        const w = pick(m.work, i);
        const claim = w && latest(w);
        if (!claim) return;
        await attempt(rt, async () => {
          if (op === 'heartbeat') w.claims[w.claims.length - 1] = await rt.work.heartbeat(claim);
          if (op === 'running') await rt.work.markRunning(claim);
          if (op === 'sending') await rt.work.markSending(claim);
          if (op === 'succeed') await rt.work.succeed(claim);
          if (op === 'fail') await rt.work.fail(claim, { error: { code: 'x', message: 'failed' } });
          if (op === 'retry')
            await rt.work.fail(claim, {
              error: { code: 'x', message: 'again' },
              retryAt: new Date(rt.clock.now() + 5_000).toISOString(),
            });
          if (op === 'unknown') await rt.work.markUnknown(claim, 'lost the connection');
        });
      }),
    ),
  ),
  fc.nat().map((i) =>
    command(`stale(${i})`, async (m, rt) => {
      const w = pick(m.work, i);
      const first = w?.claims[0];
      if (!w || !first) return;
      const view = await rt.work.get(w.workId);
      if (view.claimToken === first.claimToken) return;
      // The first claim is no longer the current one: every write with it is refused, appending nothing.
      const head = await rt.store.head();
      await expect(rt.work.heartbeat(first)).rejects.toBeInstanceOf(StaleClaimError);
      await expect(rt.work.succeed(first)).rejects.toBeInstanceOf(StaleClaimError);
      expect(await rt.store.head()).toBe(head);
    }),
  ),
  ...(['cancel', 'ack', 'resolve-sent', 'resolve-retry'] as const).map((op) =>
    fc.nat().map((i) =>
      command(`${op}(${i})`, async (m, rt) => {
        const w = pick(m.work, i);
        if (!w) return;
        const done = await attempt(rt, async () => {
          if (op === 'cancel') await rt.work.cancel(w.workId, 'not needed');
          if (op === 'ack') await rt.work.acknowledge(w.workId);
          if (op === 'resolve-sent') await rt.work.resolveUnknown(w.workId, 'sent');
          if (op === 'resolve-retry') await rt.work.resolveUnknown(w.workId, 'retry');
        });
        if (done && op.startsWith('resolve')) w.unknown = false;
      }),
    ),
  ),
  fc.integer({ min: 1, max: 20_000 }).map((ms) =>
    command(`advance(${ms})`, async (_m, rt) => {
      rt.clock.advance(ms);
    }),
  ),
  fc.constant(
    command('recover', async (m, rt) => {
      const now = new Date(rt.clock.now()).toISOString();
      const expiredSends: string[] = [];
      for (const w of m.work) {
        const view = await rt.work.get(w.workId);
        if (view.status === 'sending' && view.leaseUntil! < now) expiredSends.push(w.workId);
      }
      await rt.work.recover();
      // An expired send becomes unknown: never re-sent automatically.
      for (const workId of expiredSends) expect((await rt.work.get(workId)).status).toBe('unknown');
    }),
  ),
  fc.constant(
    command('crash+reopen', async (_m, rt) => {
      await rt.reopen();
    }),
  ),
];

const taskCommands = [
  fc.constantFrom('terminal.exec', 'agent.spawn').map((kind) =>
    command(`submit(${kind})`, async (m, rt) => {
      const input = kind === 'terminal.exec' ? { command: 'true' } : { goal: 'look around' };
      const view = await rt.tasks.submitTask({ sessionId: m.sessionId, kind, title: kind, input });
      m.tasks.push({ taskId: view.taskId, sessionId: m.sessionId, deleted: false, final: undefined });
    }),
  ),
  ...(['start', 'complete', 'fail', 'cancel', 'delete', 'archive', 'block', 'resume'] as const).map((op) =>
    fc.nat().map((i) =>
      command(`task-${op}(${i})`, async (m, rt) => {
        const t = pick(m.tasks, i);
        if (!t) return;
        await attempt(rt, async () => {
          if (op === 'start') await rt.tasks.startTask(t, 'worker');
          if (op === 'complete') await rt.tasks.completeTask(t, { exitCode: 0 });
          if (op === 'fail') await rt.tasks.failTask(t, { code: 'exit', message: 'exit 1' }, 1);
          if (op === 'cancel') await rt.tasks.cancelTask(t, 'stop');
          if (op === 'delete') await rt.tasks.deleteTask(t);
          if (op === 'archive') await rt.tasks.archiveTask(t);
          if (op === 'block') await rt.tasks.blockTask(t, 'approval', i % 2 === 0);
          if (op === 'resume') await rt.tasks.resumeTask(t);
        });
      }),
    ),
  ),
];

it(`model-based on ${storeKind}: leases, fencing tokens, recovery, crashes and the task board keep their invariants`, async () => {
  let seed = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.commands([...workCommands, ...workCommands.slice(1, 2), ...workCommands.slice(-3), ...taskCommands], {
        maxCommands: 20,
        size: 'medium',
      }),
      async (cmds) => {
        const rt = await openRuntime({ seed: ++seed, synchronous: 'NORMAL' });
        // crash+reopen closes the store and opens it again on the same file or database.
        try {
          const model: Model = { work: [], tasks: [], sessionId: rt.ids.next('ses') };
          // Every sequence starts with work to claim and tasks to move, so its commands have subjects.
          for (const setup of [enqueue, enqueue, enqueue, submitExec, submitExec]) await setup.run(model, rt);
          await fc.asyncModelRun(() => ({ model, real: rt }), cmds);
        } finally {
          await rt.dispose();
        }
      },
    ),
    propertySettings(runsOn({ sqlite: 1000, postgres: 30 })),
  );
}, 600_000);
