import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CORE_DIR } from '@demiurge/host';
import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, sleep, tempDir, within } from './cli.js';
import { recordGolden } from './golden-record.js';
import { writeHome } from './home.js';
import { LogReader, type LogRow } from './log-reader.js';
import { ServedHome } from './served-home.js';
import { SLOW_OUTPUT_ENV, writeSlowCore } from './slow-core.js';
import { verifyHome } from './store-checks.js';

let served: ServedHome | undefined;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  await served?.dispose();
  served = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A shell command that runs until the test creates `go` in the workspace (its working directory). */
const UNTIL_GO = 'while [ ! -f go ]; do sleep 0.05; done';

const ended = (rows: LogRow[]) =>
  rows.filter((e) => ['turn.completed', 'turn.failed', 'turn.cancelled'].includes(e.type));

/** The run of the first call of `tool` in the log, once it started. */
async function startedCall(home: ServedHome, tool: string): Promise<{ runId: string; callId: string; turnId: string }> {
  const requested = await home.reader.waitFor(
    `a ${tool} call`,
    (e) => e.type === 'tool_call.requested' && e.data.tool === tool,
  );
  await home.reader.waitFor(
    `the ${tool} call to start`,
    // A shell call's command runs once its process group is recorded (tool_call.process_started).
    (e) =>
      e.streamId === requested.streamId &&
      e.type === (tool === 'shell' ? 'tool_call.process_started' : 'tool_call.started'),
  );
  return {
    runId: requested.data.runId as string,
    callId: requested.streamId,
    turnId: requested.data.turnId as string,
  };
}

describe('pause, resume and cancel on a serving host (issue 13)', () => {
  it('runs pause lets the running call finish and be recorded; runs resume (another CLI process) continues the run and the waiting run client prints its answer; verify is clean at every step', async () => {
    served = await ServedHome.start({
      // A short lease: the pause outlives it, so a paused owner that stopped heartbeating would show in verify.
      runLeaseMs: 3_000,
      script: [
        {
          content: 'Checking slowly.',
          tool_calls: [{ name: 'shell', arguments: { command: `${UNTIL_GO}; echo checked` } }],
        },
        { content: 'All checked, after the pause.' },
      ],
    });
    const home = served.home;
    const client = demiurge(['run', 'check it', '--home', home.dir], { cwd: home.workspace });
    const { runId, callId, turnId } = await startedCall(served, 'shell');

    const paused = await demiurge(['runs', 'pause', runId, '--reason', 'lunch', '--home', home.dir]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`run ${runId}: paused (lunch)`);
    // The call in flight is still running when the pause is recorded: now let it finish.
    expect(served.types(callId)).toEqual(['tool_call.requested', 'tool_call.started', 'tool_call.process_started']);
    writeFileSync(join(home.workspace, 'go'), '');
    // The call in flight is not aborted: it completes and its result is recorded.
    const outcome = await served.reader.waitFor(
      'the shell call to settle',
      (e) =>
        e.streamId === callId &&
        !['tool_call.requested', 'tool_call.started', 'tool_call.process_started'].includes(e.type),
    );
    expect(outcome.type).toBe('tool_call.succeeded');
    expect(outcome.data.output).toContain('checked');
    // Paused at the step boundary, past the lease length: no model round, the client still waits, verify clean.
    await sleep(4_000);
    expect(served.types(runId).filter((t) => !t.startsWith('run.owner_heartbeat'))).not.toContain('run.completed');
    expect(served.reader.stream(turnId).filter((e) => e.type === 'turn.model_responded')).toHaveLength(1);
    expect(ended(served.reader.stream(turnId))).toEqual([]);
    expect(await within(client, 0)).toBe(false);
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });

    const resumed = await demiurge(['runs', 'resume', runId, '--home', home.dir]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`run ${runId}: running`);
    const answered = await client;
    expect([answered.code, answered.stdout, answered.stderr]).toEqual([0, 'All checked, after the pause.\n', '']);
    expect(served.types(callId)).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.process_started',
      'tool_call.succeeded',
    ]);
    expect(served.types(runId).filter((t) => t !== 'run.owner_heartbeat' && t !== 'run.checkpointed')).toEqual([
      'run.queued',
      'run.started',
      'run.owner_claimed',
      'run.paused',
      'run.resumed',
      'run.completed',
    ]);
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });
  });

  it('without serve: the host inside a `run` client continues its run when another CLI process resumes it', async () => {
    const dir = tempDir('demiurge-inprocess-');
    cleanups.push(dir.remove);
    const home = writeHome(dir.path, {
      script: [
        { content: 'Checking.', tool_calls: [{ name: 'shell', arguments: { command: `${UNTIL_GO}; echo checked` } }] },
        { content: 'Checked in process.' },
      ],
    });
    expect((await demiurge(['init', '--home', home.dir])).code).toBe(0); // the store, for the log reader
    const reader = new LogReader(home.db);
    cleanups.push(() => reader.close());
    const client = demiurge(['run', 'check it', '--home', home.dir], { cwd: home.workspace });
    const requested = await reader.waitFor('the shell call', (e) => e.type === 'tool_call.requested');
    await reader.waitFor('its start', (e) => e.streamId === requested.streamId && e.type === 'tool_call.started');
    const runId = requested.data.runId as string;
    expect((await demiurge(['runs', 'pause', runId, '--home', home.dir])).code).toBe(0);
    writeFileSync(join(home.workspace, 'go'), '');
    await reader.waitFor(
      'the call to succeed',
      (e) => e.streamId === requested.streamId && e.type === 'tool_call.succeeded',
    );
    expect(await within(client, 1_000)).toBe(false);
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });
    const resumed = await demiurge(['runs', 'resume', runId, '--home', home.dir]);
    expect(resumed.stdout).toContain('continues it');
    const answered = await client;
    expect([answered.code, answered.stdout]).toEqual([0, 'Checked in process.\n']);
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });
  });

  it('a run paused when its host stopped is continued by the next serving host when resumed from the CLI', async () => {
    served = await ServedHome.start({
      script: [
        { content: 'Step one.', tool_calls: [{ name: 'shell', arguments: { command: UNTIL_GO } }] },
        { content: 'Finished by the next host.' },
      ],
    });
    const home = served.home;
    const gateway = await served.gateway();
    const ids = await gateway.request('operator.submit', { text: 'do it' });
    const { runId, callId } = await startedCall(served, 'shell');
    const paused = await demiurge(['runs', 'pause', runId, '--home', home.dir]);
    expect([paused.code, paused.stderr]).toEqual([0, '']);
    writeFileSync(join(home.workspace, 'go'), '');
    await served.reader.waitFor(
      'the call to succeed',
      (e) => e.streamId === callId && e.type === 'tool_call.succeeded',
    );
    expect((await served.stop('SIGTERM')).code).toBe(0);
    // Nobody owns the paused run now: that is no finding (it waits for an explicit resume).
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });

    await served.restart();
    const resumed = await demiurge(['runs', 'resume', runId, '--home', home.dir]);
    expect(resumed.code).toBe(0);
    const end = await served.turnEnd(ids.turn_id);
    expect(end.type).toBe('turn.completed');
    expect(served.types(callId)).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.process_started',
      'tool_call.succeeded',
    ]);
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });
  });

  it('runs cancel from another CLI process stops the call in flight at once and ends the run; verify is clean', async () => {
    served = await ServedHome.start({
      script: [{ content: 'Waiting.', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] }],
    });
    const home = served.home;
    const client = demiurge(['run', 'wait a while', '--home', home.dir], { cwd: home.workspace });
    const { runId, callId, turnId } = await startedCall(served, 'shell');
    const started = Date.now();
    expect((await demiurge(['runs', 'cancel', runId, '--reason', 'not needed', '--home', home.dir])).code).toBe(0);
    const answered = await client;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(answered.code).toBe(1);
    expect(answered.stderr).toContain('the turn cancelled');
    expect(served.types(callId).at(-1)).toBe('tool_call.cancelled');
    expect(served.types(turnId).at(-1)).toBe('turn.cancelled');
    expect(served.types(runId).at(-1)).toBe('run.cancelled');
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });
  });
});

describe('shutdown deadline (issue 13)', () => {
  it('SIGTERM with a stuck turn: serve exits 1 within its deadline, naming the phase and the run it waited for; the next host finishes the turn', async () => {
    const coreDir = tempDir('demiurge-slow-core-');
    cleanups.push(coreDir.remove);
    const core = writeSlowCore(coreDir.path);
    served = await ServedHome.start({ core, script: [{ content: 'The answer, held back.' }] });
    const home = served.home;
    // A shutdown deadline of 1.5 s, and an output slot that holds the answer for 60 s (it ignores aborts).
    await served.stop('SIGKILL');
    appendFileSync(`${home.dir}/config.yaml`, 'shutdown:\n  deadline_ms: 1500\n');
    const host = await served.restart({ [SLOW_OUTPUT_ENV]: '60000' });
    const gateway = await served.gateway();
    const ids = await gateway.request('operator.submit', { text: 'answer slowly' });
    await served.reader.waitFor(
      'the slow output slot to start',
      (e) => e.type === 'slot.started' && e.data.slotId === 'slow_output',
    );
    const started = Date.now();
    process.kill(host.pid, 'SIGTERM');
    const exit = await host.exited;
    const took = Date.now() - started;
    expect(exit).toEqual({ code: 1, signal: null });
    expect(took).toBeLessThan(6_000); // the deadline (1.5 s) plus the engine's own drain (2 s) and start-up slack
    expect(host.stderr()).toContain('demiurge: shutdown did not finish within 1500 ms (shutdown.deadline_ms)');
    expect(host.stderr()).toMatch(new RegExp(`still waiting for draining running turns: runs ${ids.run_id}`));

    // The next host recovers the run its owner left and finishes the turn.
    await served.restart();
    expect((await served.turnEnd(ids.turn_id)).type).toBe('turn.completed');
    expect(await verifyHome(home.dir)).toMatchObject({ ok: true, problems: [] });
  });
});

/**
 * The bundled core plus a parallel output slot whose module takes 2 s to import (top-level await) and that
 * may run for 1 s: imported on first use, the import alone outlasts the timeout.
 */
function writeSlowImportCore(dir: string): string {
  cpSync(DEFAULT_CORE_DIR, dir, { recursive: true });
  const slot = join(dir, 'output', 'slow_import');
  mkdirSync(slot, { recursive: true });
  writeFileSync(
    join(slot, 'slot.yaml'),
    ['entrypoint: module.mjs', 'description: Slow to import.', 'timeout_seconds: 1', 'failure_policy: soft', ''].join(
      '\n',
    ),
  );
  writeFileSync(
    join(slot, 'module.mjs'),
    'await new Promise((resolve) => setTimeout(resolve, 2000));\nexport default async function slowImport(ctx) {\n  ctx.log("ran");\n}\n',
  );
  const pipelines = join(dir, 'pipelines.yaml');
  const text = readFileSync(pipelines, 'utf8');
  const changed = text.replace('parallel: [audit_log]', 'parallel: [audit_log, slow_import]');
  if (changed === text) throw new Error(`cannot find the output parallel list in ${pipelines}`);
  writeFileSync(pipelines, changed);
  return dir;
}

describe('shutdown with a scheduled turn in flight (issue 13)', () => {
  it('SIGTERM while a scheduled fire runs a long tool call: serve closes in seconds (the turn is released, not waited out)', async () => {
    const coreDir = tempDir('demiurge-scheduled-core-');
    cleanups.push(coreDir.remove);
    const core = writeScheduledCore(coreDir.path, { slow: 'cron: "* * * * * *"\nprompt: take your time\n' });
    served = await ServedHome.start({
      core,
      script: [{ content: 'Taking my time.', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 60' } }] }],
    });
    await enableScheduler(served);
    const call = await startedCall(served, 'shell');
    const host = served.host;
    const started = Date.now();
    process.kill(host.pid, 'SIGTERM');
    const exit = await host.exited;
    expect(Date.now() - started).toBeLessThan(8_000); // the engine's 2 s drain, then the call is stopped
    expect(exit).toEqual({ code: 0, signal: null });
    expect(host.stderr()).not.toContain('shutdown did not finish');
    expect(served.types(call.callId).at(-1)).toBe('tool_call.cancelled');
    expect(served.types(call.runId).at(-1)).toBe('run.owner_lease_expired'); // released for the next host
  });
});

describe('slot runs under load (issue 13)', () => {
  it('slot modules are imported when the host starts, not by the first turn: a slow import does not time out its slot runs', async () => {
    const coreDir = tempDir('demiurge-slow-import-core-');
    cleanups.push(coreDir.remove);
    served = await ServedHome.start({ core: writeSlowImportCore(coreDir.path), script: [] });
    const gateway = await served.gateway();
    const turns = [];
    for (let i = 0; i < 3; i++) turns.push(await gateway.request('operator.submit', { text: `hello ${i}` }));
    for (const t of turns) expect((await served.turnEnd(t.turn_id)).type).toBe('turn.completed');
    const slowRuns = served.reader
      .events(1, 'slot.started')
      .filter((e) => e.data.slotId === 'slow_import')
      .map((e) => e.streamId);
    expect(slowRuns).toHaveLength(3);
    for (const id of slowRuns) {
      const end = await served.reader.waitFor(
        `the end of ${id}`,
        (e) => e.streamId === id && e.type !== 'slot.started',
      );
      expect(end.type).toBe('slot.finished');
    }
    expect(served.reader.events(1, 'slot.timed_out')).toEqual([]);
    expect(served.host.stderr()).not.toContain('undefined');
  });
});

/** The bundled core plus schedules (`<id>` → the YAML of `schedules/<id>.yaml`). */
function writeScheduledCore(dir: string, schedules: Record<string, string>): string {
  cpSync(DEFAULT_CORE_DIR, dir, { recursive: true });
  mkdirSync(join(dir, 'schedules'), { recursive: true });
  for (const [id, yaml] of Object.entries(schedules)) writeFileSync(join(dir, 'schedules', `${id}.yaml`), yaml);
  return dir;
}

/** Restarts the served home with the scheduler on, ticking every 200 ms. */
async function enableScheduler(home: ServedHome): Promise<void> {
  await home.stop('SIGKILL');
  const file = join(home.home.dir, 'config.yaml');
  const config = readFileSync(file, 'utf8');
  writeFileSync(file, config.replace('scheduler:\n  enabled: false', 'scheduler:\n  enabled: true\n  tick_ms: 200'));
  await home.restart();
}

interface InstanceDoc {
  readonly scheduleId: string;
  readonly status: string;
  readonly sessionId: string | null;
}

describe('scheduled fires (issue 13)', () => {
  it('without delivery the answer is recorded in the fire session and sent nowhere; with delivery: operator connected operator clients get it', async () => {
    const coreDir = tempDir('demiurge-scheduled-core-');
    cleanups.push(coreDir.remove);
    const core = writeScheduledCore(coreDir.path, {
      // Every second; `quiet` has no delivery, `loud` uses the shorthand for `{ channel: operator }`.
      quiet: 'cron: "* * * * * *"\nprompt: note the time quietly\n',
      loud: 'cron: "* * * * * *"\nprompt: tell the operator\ndelivery: operator\n',
    });
    served = await ServedHome.start({ core, script: [] });
    const home = served.home;
    await enableScheduler(served);
    const gateway = await served.gateway();
    const delivered: { session_id: string; text: string }[] = [];
    const sub = gateway.events$.subscribe((e) => {
      if (e.event === 'operator.deliver') delivered.push(e.payload as { session_id: string; text: string });
    });
    cleanups.push(() => sub.unsubscribe());
    const completed = (scheduleId: string) =>
      served!.reader
        .docs<InstanceDoc>('schedule-instances', 'instances')
        .filter((i) => i.scheduleId === scheduleId && i.status === 'completed' && i.sessionId);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const loudSessions = new Set(completed('loud').map((i) => i.sessionId));
      if (completed('quiet').length >= 2 && delivered.some((d) => loudSessions.has(d.session_id))) break;
      await sleep(100);
    }
    const quiet = completed('quiet');
    const loud = completed('loud');
    expect(quiet.length).toBeGreaterThanOrEqual(2);
    expect(loud.length).toBeGreaterThanOrEqual(1);
    // With `delivery: operator`: the connected client got the answer of a fire, as operator.deliver.
    const loudSessions = new Set(loud.map((i) => i.sessionId));
    expect(delivered.filter((d) => loudSessions.has(d.session_id)).length).toBeGreaterThanOrEqual(1);
    // Without `delivery`: the answer is in the fire's own session, and nothing was queued to send.
    const queued = served.reader.events(1, 'delivery.queued').map((e) => e.data.sessionId);
    for (const fire of quiet) {
      const answers = served.reader
        .stream(fire.sessionId!)
        .filter((e) => e.type === 'message.recorded' && e.data.role === 'assistant');
      expect(answers).toHaveLength(1);
      expect(queued).not.toContain(fire.sessionId);
    }
    expect(served.reader.events(1, 'delivery.unrouted')).toEqual([]);
    const status = await demiurge(['status', '--json', '--home', home.dir]);
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as { lastError: unknown }).lastError).toBeNull();
    expect(delivered.some((d) => quiet.some((q) => q.sessionId === d.session_id))).toBe(false);
    await recordGolden('crash-schedule-fire', home.dir);
  });
});
