import { type OperatorClient, OperatorRequestError } from '@demiurge/operator';
import { sleep } from './cli.js';
import { openGateway } from './gateway.js';
import type { FakeStep } from './home.js';
import type { Prng } from './prng.js';
import type { Ack } from './store-checks.js';

/**
 * The crash workload's fake model, per session: a background `shell` (a detached `terminal.exec` task that
 * outlives the turn), then a `write_file` and a short foreground `shell` in one round, then a plain answer;
 * past the script the fake echoes, so follow-up turns are one model round each.
 */
export const WORKLOAD_SCRIPT: readonly FakeStep[] = [
  {
    content: 'Starting the build in the background.',
    tool_calls: [{ name: 'shell', arguments: { command: 'sleep 2', background: true } }],
  },
  {
    content: 'Writing the notes while it runs.',
    tool_calls: [
      { name: 'write_file', arguments: { path: 'notes.txt', content: 'crash test notes\n' } },
      { name: 'shell', arguments: { command: 'sleep 0.3' } },
    ],
  },
  { content: 'Done: the build runs in the background and the notes are written.' },
];

export interface WorkloadContext {
  readonly socket: string;
  readonly cycle: number;
  readonly prng: Prng;
  /** Every answered submit of the home (appended to). */
  readonly acks: Ack[];
  /** Operator sessions created so far (appended to): follow-ups go there. */
  readonly sessions: string[];
  /** Sessions bound to the webhook channel: their answers go through the webhook adapter. */
  readonly webhookSessions: readonly string[];
  /** At most this many submits unanswered at once (default 4). */
  readonly maxInFlight?: number;
}

export interface WorkloadResult {
  readonly submitted: number;
  readonly acknowledged: number;
  /** Submits the gateway refused with an error answer (not a dropped connection): `code: message`. */
  readonly refused: string[];
}

/**
 * Submits turns through one gateway client until stopped: one for each webhook-bound session first, then
 * new sessions (the whole script), more webhook turns and follow-ups; each turn is awaited loosely (a few in flight, a short random
 * pause between submits). A submit in flight when the host dies is simply not acknowledged.
 */
export function startWorkload(ctx: WorkloadContext): {
  /** Resolves when the first submit is acknowledged: the host is admitting turns. */
  readonly firstAck: Promise<void>;
  stop(): Promise<WorkloadResult>;
} {
  let stopped = false;
  let acked!: () => void;
  const firstAck = new Promise<void>((resolve) => {
    acked = resolve;
  });
  let client: OperatorClient | undefined;
  let submitted = 0;
  let acknowledged = 0;
  const refused: string[] = [];
  const inFlight = new Set<Promise<void>>();
  const submit = (c: OperatorClient, n: number) => {
    const roll = ctx.prng.next();
    // Each webhook session first: a host binds a session's routes when it admits input for it.
    const sessionId =
      n <= ctx.webhookSessions.length
        ? ctx.webhookSessions[n - 1]
        : roll < 0.4
          ? undefined
          : roll < 0.75 || ctx.sessions.length === 0
            ? ctx.prng.pick(ctx.webhookSessions)
            : ctx.prng.pick(ctx.sessions);
    submitted++;
    const text = `cycle ${ctx.cycle} turn ${n}`;
    const p = c
      .request('operator.submit', { text, ...(sessionId ? { session_id: sessionId } : {}) })
      .then((ids) => {
        acknowledged++;
        acked();
        ctx.acks.push({ cycle: ctx.cycle, session_id: ids.session_id, run_id: ids.run_id, turn_id: ids.turn_id });
        if (!sessionId) ctx.sessions.push(ids.session_id);
      })
      .catch((err: unknown) => {
        if (err instanceof OperatorRequestError) refused.push(`${err.code}: ${err.message}`);
      });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  const loop = (async () => {
    try {
      client = await openGateway(ctx.socket);
    } catch {
      return; // the host died before the client got in
    }
    for (let n = 1; !stopped; n++) {
      if (inFlight.size < (ctx.maxInFlight ?? 4)) submit(client, n);
      await sleep(ctx.prng.int(10, 80));
    }
  })();
  return {
    firstAck,
    async stop() {
      stopped = true;
      await loop;
      await Promise.allSettled([...inFlight]);
      await client?.close();
      return { submitted, acknowledged, refused };
    },
  };
}
