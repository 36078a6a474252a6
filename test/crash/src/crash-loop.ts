import { sleep, tempDir, within } from './cli.js';
import { seedWebhookSessions, writeHome } from './home.js';
import { type HostProcess, startHost } from './host-process.js';
import {
  DELIVERY_SEND_ENDS,
  openedNotClosed,
  pendingDeliveries,
  settle,
  TOOL_CALL_ENDS,
  tasksNotOwnedBy,
} from './host-state.js';
import { LogReader } from './log-reader.js';
import { createPrng } from './prng.js';
import { type Ack, checkStoppedStore, verifyHome } from './store-checks.js';
import { startWebhookSink } from './webhook-sink.js';
import { startWorkload, WORKLOAD_SCRIPT } from './workload.js';

/** One failed check: which home, after which kill, what. */
export interface Problem {
  readonly home: number;
  /** The kill it followed (0: the final, settled restart). */
  readonly cycle: number;
  readonly check: string;
  readonly detail: string;
}

export interface CrashLoopOptions {
  readonly index: number;
  readonly kills: number;
  readonly seed: number;
  /** Full `verify` after every this many restarts (and at the end). Default 10. */
  readonly verifyEvery?: number;
  readonly log?: (line: string) => void;
  /** Keep the home directory (for a look at a failure). */
  readonly keep?: boolean;
}

/** What one home went through, for the report. */
export interface CrashLoopReport {
  readonly index: number;
  readonly kills: number;
  readonly problems: Problem[];
  readonly submitted: number;
  readonly acknowledged: number;
  readonly head: number;
  /**
   * Kills that landed with a tool call started in that cycle and not settled, a webhook or operator send
   * started and not settled, a live run, an active task.
   */
  readonly landed: { callsInFlight: number; sendsInFlight: number; liveRuns: number; tasksActive: number };
  readonly webhook: {
    readonly received: number;
    readonly keys: number;
    readonly duplicates: number;
    /** Unknown webhook deliveries whose POST did reach the sink (the others never left the host). */
    readonly unknownReceived: number;
  };
  /** Every delivery at the end, by channel and status. */
  readonly deliveries: Record<string, Record<string, number>>;
  /** Deliveries still queued or sending after the last host settled, with their work's claim. */
  readonly pendingDeliveries: string[];
  readonly verifyRuns: { count: number; totalMs: number };
  readonly cycleMs: { min: number; mean: number; max: number };
  /** Mean ms from spawn to the ready line, and of the in-process check of the stopped store. */
  readonly phaseMs: { ready: number; stoppedCheck: number };
  readonly durationMs: number;
  /** What the hosts wrote on stderr, ids and numbers masked, with how often. */
  readonly stderr: Record<string, number>;
}

const FIRST_ACK_MS = 10_000;
const SETTLE_MS = 20_000;

/** Counts a host's stderr lines, ids and numbers masked so alike lines count together. */
function countLines(counts: Map<string, number>, text: string): void {
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const masked = line.replace(/\b[a-z]{3}_[0-9A-Z]{26}\b/g, '<id>').replace(/\d+/g, 'N');
    counts.set(masked, (counts.get(masked) ?? 0) + 1);
  }
}

/**
 * One home under the crash loop: `kills` times, start `demiurge serve`, check the recovered task owners,
 * run the workload and SIGKILL the host 50–600 ms after its first acknowledged submit, then check the stopped store
 * (opens, log follows the machines, invariants, every acknowledged submit present) and the webhook sink
 * (no Idempotency-Key twice); the full `demiurge verify` every `verifyEvery` restarts and at the end, after
 * a last restart that is left to settle and stopped with SIGTERM.
 */
export async function runCrashLoop(options: CrashLoopOptions): Promise<CrashLoopReport> {
  const started = Date.now();
  const { index } = options;
  const log = options.log ?? (() => undefined);
  const killPrng = createPrng(options.seed);
  const workPrng = createPrng(options.seed ^ 0x5bd1e995);
  const sinkPrng = createPrng(options.seed ^ 0x1b873593);
  const verifyEvery = options.verifyEvery ?? 10;
  const dir = tempDir(`demiurge-crash-${index}-`);
  const sink = await startWebhookSink(() => sinkPrng.int(0, 50));
  const problems: Problem[] = [];
  const problem = (cycle: number, check: string, details: readonly string[]) => {
    for (const detail of details) problems.push({ home: index, cycle, check, detail });
  };
  const invariants = (cycle: number, findings: readonly { invariant: string; message: string }[]) => {
    for (const f of findings) problem(cycle, `invariant ${f.invariant} (stopped store)`, [f.message]);
  };
  const acks: Ack[] = [];
  const sessions: string[] = [];
  const landed = { callsInFlight: 0, sendsInFlight: 0, liveRuns: 0, tasksActive: 0 };
  const verifyRuns = { count: 0, totalMs: 0 };
  const cycleTimes: number[] = [];
  const stderrLines = new Map<string, number>();
  const reportedTwice = new Set<string>();
  const phase = { readyMs: 0, checkMs: 0 };
  let submitted = 0;
  let checkedAcks = 0;
  let head = 0;
  const home = writeHome(dir.path, { script: WORKLOAD_SCRIPT, webhookUrl: sink.url, pollMs: 50 });
  const webhookSessions = await seedWebhookSessions(home.dir, 4);
  const reader = new LogReader(home.db);
  const fullVerify = async (cycle: number) => {
    const v = await verifyHome(home.dir);
    verifyRuns.count++;
    verifyRuns.totalMs += v.ms;
    for (const p of v.problems) problem(cycle, p.check, [p.detail]);
  };
  let current: HostProcess | undefined;
  const restart = async (cycle: number): Promise<HostProcess> => {
    const t = Date.now();
    const host = await startHost(home.dir, { cwd: home.workspace });
    phase.readyMs += Date.now() - t;
    current = host;
    problem(cycle, 'active tasks owned by the new host', await tasksNotOwnedBy(reader, host.ready.owner));
    return host;
  };
  try {
    for (let cycle = 1; cycle <= options.kills; cycle++) {
      const cycleStarted = Date.now();
      const from = reader.head() + 1;
      const host = await restart(cycle);
      if (cycle % verifyEvery === 0) await fullVerify(cycle);
      const workload = startWorkload({
        socket: host.ready.socket,
        cycle,
        prng: workPrng,
        acks,
        sessions,
        webhookSessions,
      });
      // The kill comes 50–600 ms into the workload, counted from its first acknowledged submit: on a loaded
      // 2-core machine a fresh host can take longer than that to admit its first turn.
      const killAfter = killPrng.int(50, 600);
      const admitted = await within(workload.firstAck, FIRST_ACK_MS);
      if (!admitted) problem(cycle, 'host admits turns', [`no submit acknowledged within ${FIRST_ACK_MS} ms of ready`]);
      await sleep(killAfter);
      const exit = await host.stop('SIGKILL');
      countLines(stderrLines, host.stderr());
      const done = await workload.stop();
      submitted += done.submitted;
      if (exit.signal !== 'SIGKILL')
        problem(cycle, 'host died by the kill', [`it exited ${JSON.stringify(exit)}: ${host.stderr()}`]);
      problem(cycle, 'submits refused by a healthy host', done.refused);
      const cycleEvents = reader.events(from);
      landed.callsInFlight += openedNotClosed(cycleEvents, 'tool_call.started', TOOL_CALL_ENDS) ? 1 : 0;
      landed.sendsInFlight += openedNotClosed(cycleEvents, 'delivery.sending', DELIVERY_SEND_ENDS) ? 1 : 0;
      landed.liveRuns += reader.count('runs', 'live-runs') > 0 ? 1 : 0;
      landed.tasksActive += reader.count('task-board', 'tasks', 'active') > 0 ? 1 : 0;

      const checkStarted = Date.now();
      const stopped = await checkStoppedStore(home.db, acks.slice(checkedAcks));
      phase.checkMs += Date.now() - checkStarted;
      checkedAcks = acks.length;
      head = stopped.head;
      problem(cycle, 'log follows the lifecycle machines', stopped.violations);
      invariants(cycle, stopped.findings);
      problem(cycle, 'acknowledged submit in the log', stopped.missing);
      const twice = sink.duplicates().filter(([key]) => !reportedTwice.has(key));
      for (const [key] of twice) reportedTwice.add(key);
      problem(
        cycle,
        'webhook delivered at most once',
        twice.map(([key, n]) => `Idempotency-Key ${key} received ${n} times`),
      );
      cycleTimes.push(Date.now() - cycleStarted);
      if (cycle % 10 === 0 || cycle === options.kills) {
        log(
          `home ${index}: kill ${cycle}/${options.kills}, head ${head}, ${acks.length} acknowledged, ` +
            `${sink.hits.length} webhook POSTs, ${problems.length} problem(s), ${Math.round((Date.now() - started) / 1000)} s`,
        );
      }
    }

    // The end: a last restart, left to finish its work, checked, then stopped gracefully.
    const host = await restart(0);
    problem(0, 'the last host finishes the recovered runs and tasks', await settle(reader, SETTLE_MS));
    const pending = pendingDeliveries(reader, host.ready.owner);
    await fullVerify(0);
    const exit = await host.stop('SIGTERM');
    countLines(stderrLines, host.stderr());
    if (exit.code !== 0) problem(0, 'graceful stop', [`exit ${JSON.stringify(exit)}: ${host.stderr()}`]);
    const final = await checkStoppedStore(home.db, acks);
    head = final.head;
    problem(0, 'log follows the lifecycle machines', final.violations);
    invariants(0, final.findings);
    problem(0, 'acknowledged submit in the log', final.missing);
    const duplicates = sink.duplicates();
    problem(
      0,
      'webhook delivered at most once',
      duplicates
        .filter(([key]) => !reportedTwice.has(key))
        .map(([key, n]) => `Idempotency-Key ${key} received ${n} times`),
    );
    const deliveries = reader.docs<{ deliveryId: string; channel: string; status: string }>('outbox', 'deliveries');
    const byStatus: Record<string, Record<string, number>> = {};
    for (const d of deliveries) {
      const channel = byStatus[d.channel] ?? {};
      channel[d.status] = (channel[d.status] ?? 0) + 1;
      byStatus[d.channel] = channel;
    }
    const webhook = deliveries.filter((d) => d.channel === 'webhook');
    problem(
      0,
      'a webhook delivery recorded sent reached the sink',
      webhook
        .filter((d) => d.status === 'sent' && !sink.counts.has(d.deliveryId))
        .map((d) => `delivery ${d.deliveryId} is sent but the sink never saw it`),
    );
    const unknownReceived = webhook.filter((d) => d.status === 'unknown' && sink.counts.has(d.deliveryId)).length;
    const mean = cycleTimes.reduce((a, b) => a + b, 0) / Math.max(1, cycleTimes.length);
    return {
      index,
      kills: options.kills,
      problems,
      submitted,
      acknowledged: acks.length,
      head,
      landed,
      webhook: { received: sink.hits.length, keys: sink.counts.size, duplicates: duplicates.length, unknownReceived },
      deliveries: byStatus,
      pendingDeliveries: pending,
      verifyRuns,
      cycleMs: { min: Math.min(...cycleTimes), mean: Math.round(mean), max: Math.max(...cycleTimes) },
      phaseMs: {
        ready: Math.round(phase.readyMs / (options.kills + 1)),
        stoppedCheck: Math.round(phase.checkMs / Math.max(1, options.kills)),
      },
      durationMs: Date.now() - started,
      stderr: Object.fromEntries(stderrLines),
    };
  } finally {
    await current?.stop('SIGKILL');
    reader.close();
    await sink.close();
    if (options.keep) log(`home ${index} kept at ${dir.path}`);
    else dir.remove();
  }
}
