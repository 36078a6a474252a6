import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isEvent } from '@demiurge/contracts';
import type { CheckProblem } from '@demiurge/crash-sweep';
import { OperatorRequestError } from '@demiurge/operator';
import { EFFECTS_FILE } from './effect-checks.js';
import type { DriveContext, HostScenario } from './host-driver.js';
import { turnEnd } from './settle.js';
import type { FakeStep } from './sweep-home.js';

/** Leases short enough that a restarted host takes a dead host's work over within the run. */
const LEASES = { runLeaseMs: 3000, workLeaseMs: 1500, pollMs: 50 } as const;
const INSTANCE_ENDS = new Set(['schedule_instance.completed', 'schedule_instance.failed']);

const CHILD_GOAL = 'child: count to three';
const TURN_SCRIPT: readonly FakeStep[] = [
  {
    content: 'Starting the build in the background and writing the notes.',
    tool_calls: [
      {
        name: 'shell',
        arguments: { command: `echo "$DEMIURGE_TASK_ID build" >> ${EFFECTS_FILE}; sleep 0.3`, background: true },
      },
      { name: 'write_file', arguments: { path: 'notes.txt', content: 'crash sweep notes\n' } },
    ],
  },
  { content: 'Delegating the count.', tool_calls: [{ name: 'delegate_task', arguments: { goal: CHILD_GOAL } }] },
  { content: 'Done: the build ran, the notes are written and the child counted.' },
  { match: CHILD_GOAL, content: 'one two three' },
];

/** (1) A turn with tools (`write_file`), a detached task (a background `shell`) and a delegation (`delegate_task`). */
export const turnScenario: HostScenario = {
  name: 'turn-tools-delegation',
  config: { script: TURN_SCRIPT, ...LEASES },
  async drive(ctx) {
    if (!ctx.restarted) await ctx.submit('build it, write the notes and delegate the count');
  },
  async check(ctx) {
    const problems: CheckProblem[] = [];
    const ack = ctx.acks[0];
    if (!ack) return problems;
    const end = await turnEnd(ctx.log, ack.turn_id);
    if (!ctx.restarted && end !== 'turn.completed') {
      problems.push({ check: 'scenario completed', detail: `turn ${ack.turn_id} ended ${end}` });
    }
    if (!ctx.restarted) {
      const kinds = (await ctx.log.events('task.completed')).length;
      if (kinds < 2) problems.push({ check: 'scenario completed', detail: `${kinds} tasks completed, 2 expected` });
    }
    return problems;
  },
};

/** (2) A delivery: a turn in a webhook-bound session, its answer sent to the counting receiver. */
export const deliveryScenario: HostScenario = {
  name: 'delivery',
  config: { script: [{ content: 'Hello over the webhook.' }], ...LEASES },
  webhook: true,
  async seed({ state, webhookSessions }) {
    [state.session] = await webhookSessions(1);
  },
  async drive(ctx) {
    if (!ctx.restarted) await ctx.submit('say hello', ctx.state.session);
  },
  async check(ctx) {
    const ack = ctx.acks[0];
    if (!ack || ctx.restarted || !ctx.sink) return [];
    // Uncrashed: the answer reached the receiver exactly once.
    const sent = (await ctx.log.deliveries()).filter((d) => d.status === 'sent');
    return sent.length === 1 && ctx.sink.hits.length === 1
      ? []
      : [{ check: 'scenario completed', detail: `${sent.length} deliveries sent, ${ctx.sink.hits.length} received` }];
  },
};

/** (3) A schedule fire: a one-shot schedule due 3 s after the host serves, fired once (its turn run). */
export const scheduleScenario: HostScenario = {
  name: 'schedule-fire',
  config: { script: [{ content: 'The scheduled answer.' }], ...LEASES, scheduler: { tickMs: 200 } },
  prepareCore: (core) => mkdirSync(join(core, 'schedules'), { recursive: true }),
  async drive(ctx) {
    if (ctx.state.due) return;
    const due = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    ctx.state.due = due.toISOString();
    const cron = `${due.getUTCSeconds()} ${due.getUTCMinutes()} ${due.getUTCHours()} ${due.getUTCDate()} ${due.getUTCMonth() + 1} *`;
    const core = join(ctx.home.dir, '..', 'core');
    writeFileSync(join(core, 'schedules', 'once.yaml'), `cron: "${cron}"\nprompt: the scheduled check\n`);
  },
  async done(ctx) {
    // Once the due time was recorded (first sight before it), its instance must end: completed, or failed (in
    // error: a fire a crash interrupted is not fired twice).
    const id = await instanceOf(ctx);
    if (!id) return Date.now() > Date.parse(ctx.state.due ?? '') + 2000;
    return (await ctx.log.stream(id)).some((e) => INSTANCE_ENDS.has(e.type));
  },
  async check(ctx) {
    const problems: CheckProblem[] = [];
    const fires = (await ctx.log.events('task.submitted')).filter(
      (e) => isEvent(e, 'task.submitted') && e.data.kind === 'schedule.fire',
    );
    if (fires.length > 1) problems.push({ check: 'schedule fired once', detail: `${fires.length} fire tasks` });
    if (!ctx.restarted && !(await instanceOf(ctx))) {
      problems.push({ check: 'scenario completed', detail: `no instance recorded for ${ctx.state.due}` });
    }
    if (!ctx.restarted && fires.length !== 1) {
      problems.push({ check: 'scenario completed', detail: `${fires.length} fire tasks, 1 expected` });
    }
    return problems;
  },
};

async function instanceOf(ctx: DriveContext): Promise<string | undefined> {
  const due = ctx.state.due;
  return (await ctx.log.events('schedule_instance.scheduled')).find(
    (e) => isEvent(e, 'schedule_instance.scheduled') && e.data.dueAt === due,
  )?.streamId;
}

/** (4) A cancel: `operator.cancel` of a run while its foreground `shell` call runs. */
export const cancelScenario: HostScenario = {
  name: 'cancel',
  config: {
    script: [
      { content: 'Running the long job.', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 20' } }] },
      { content: 'The long job is done.' },
    ],
    ...LEASES,
  },
  async drive(ctx) {
    if (!ctx.restarted) await ctx.submit('run the long job');
    const ack = ctx.acks[0];
    if (!ack || ctx.state.cancelled) return;
    if (!ctx.restarted) {
      const call = await ctx.until('the shell call to be asked for', async () =>
        (await ctx.log.events('tool_call.requested')).find(
          (e) => isEvent(e, 'tool_call.requested') && e.data.turnId === ack.turn_id,
        ),
      );
      await ctx.until('the shell call to start', async () =>
        (await ctx.log.stream(call.streamId)).find((e) => e.type === 'tool_call.started'),
      );
    }
    const client = await ctx.gateway();
    try {
      await client.request('operator.cancel', { run_id: ack.run_id, reason: 'crash sweep' });
      // Answered: committed first. A cancel of a run that already ended (the restarted host finished it) is a
      // no-op, not a lost cancel.
      const took = (await ctx.log.stream(ack.run_id)).some(
        (e) => e.type === 'run.cancel_requested' || e.type === 'run.cancelled',
      );
      const status = (await ctx.log.run(ack.run_id))?.status ?? 'absent';
      ctx.state.cancelled = took ? 'acknowledged' : `no-op on a ${status} run`;
    } catch (err) {
      // After a restart the run may have ended meanwhile: a refusal is an answer, not a lost cancel.
      if (!(err instanceof OperatorRequestError) || !ctx.restarted) throw err;
      ctx.state.cancelled = `refused: ${err.message}`;
    }
  },
  async check(ctx) {
    const ack = ctx.acks[0];
    const cancelled = ctx.state.cancelled;
    if (cancelled?.startsWith('no-op') && !/ (completed|failed|cancelled) run$/.test(cancelled)) {
      return [
        {
          check: 'acknowledged cancel kept',
          detail: `run ${ack?.run_id}: cancel answered without effect, ${cancelled}`,
        },
      ];
    }
    if (!ack || cancelled !== 'acknowledged') return [];
    const run = await ctx.log.run(ack.run_id);
    const end = await turnEnd(ctx.log, ack.turn_id);
    return run?.status === 'cancelled' && end === 'turn.cancelled'
      ? []
      : [{ check: 'acknowledged cancel kept', detail: `run ${ack.run_id} is ${run?.status}, turn ${end}` }];
  },
};

/** (5) A compaction: three turns in one session, then `operator.compact` (the fake provider summarizes). */
export const compactionScenario: HostScenario = {
  name: 'compaction',
  config: { script: [], ...LEASES },
  async drive(ctx) {
    if (!ctx.restarted) {
      for (let i = 1; i <= 3; i++) {
        const ack = await ctx.submit(`setup turn ${i}`, ctx.acks[0]?.session_id);
        await ctx.until(`turn ${i} to end`, () => turnEnd(ctx.log, ack.turn_id));
      }
    }
    const session = ctx.acks[0]?.session_id;
    if (ctx.acks.length < 3 || !session || ctx.state.compaction) return;
    // After a restart the recovered last turn may still run: a manual compaction waits for it anyway.
    try {
      const result = await (await ctx.gateway()).request('operator.compact', { session_id: session });
      ctx.state.compaction = result.compaction_id;
    } catch (err) {
      // Re-sent after a crash that came after the compaction's commit: "nothing to compact" is the right answer.
      if (!(err instanceof OperatorRequestError) || !ctx.restarted) throw err;
      ctx.state.refused = err.message;
    }
  },
  async check(ctx) {
    const id = ctx.state.compaction;
    const session = ctx.acks[0]?.session_id;
    if (session && ctx.state.refused) {
      const compacted = (await ctx.log.stream(session)).some((e) => e.type === 'session.compacted');
      return compacted
        ? []
        : [
            {
              check: 'compaction retried',
              detail: `refused, yet ${session} was never compacted: ${ctx.state.refused}`,
            },
          ];
    }
    if (!id || !session) return [];
    const found = (await ctx.log.stream(session)).some(
      (e) => isEvent(e, 'session.compacted') && e.data.compactionId === id,
    );
    return found ? [] : [{ check: 'acknowledged compaction kept', detail: `${id} of ${session} is not in the log` }];
  },
};

/** The scripted scenarios of the sweep (`demiurge sweep --scenario NAME`), in the order they run. */
export const SCENARIOS: readonly HostScenario[] = [
  turnScenario,
  deliveryScenario,
  scheduleScenario,
  cancelScenario,
  compactionScenario,
];
