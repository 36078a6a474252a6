import { checkInvariants, verifyProblems } from '@demiurge/cli';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { hostProjectors } from '@demiurge/host';
import { verifyLog } from '@demiurge/lifecycle';
import { demiurge } from './cli.js';

/** A submit the gateway answered: its ids must be in the log from then on. */
export interface Ack {
  readonly cycle: number;
  readonly session_id: string;
  readonly run_id: string;
  readonly turn_id: string;
}

/** What the cheap per-restart check found; every list empty is a pass. */
export interface StoppedStoreCheck {
  readonly head: number;
  /** Log events a lifecycle machine does not allow (position, stream, event). */
  readonly violations: string[];
  /** `demiurge verify`'s invariants, evaluated on the live projections. */
  readonly findings: { invariant: string; message: string }[];
  /** Acknowledged ids with no events. */
  readonly missing: string[];
}

/**
 * The cheap check after a kill, in this process, while no host runs: opening the store (migrations and
 * projection catch-up, as the next host would), the log through the lifecycle machines, the invariants, and
 * every acknowledged submit's session, run and turn stream present. No rebuild: the full `verify` does that.
 */
export async function checkStoppedStore(db: string, acks: readonly Ack[]): Promise<StoppedStoreCheck> {
  const store = await openSqliteEventStore({ path: db, projectors: hostProjectors });
  try {
    const log = await verifyLog(store.iterate(), { maxViolations: 20 });
    const findings = await checkInvariants(store, Date.now());
    const missing: string[] = [];
    for (const ack of acks) {
      for (const [what, id] of [
        ['session', ack.session_id],
        ['run', ack.run_id],
        ['turn', ack.turn_id],
      ] as const) {
        if ((await store.readStream(id)).length === 0) {
          missing.push(`${what} ${id} of the submit acknowledged in cycle ${ack.cycle} has no events`);
        }
      }
    }
    return {
      head: await store.head(),
      violations: log.violations.map((v) => `position ${v.position}: ${v.message}`),
      findings: findings.map((f) => ({ invariant: f.invariant, message: f.message })),
      missing,
    };
  } finally {
    await store.close();
  }
}

/** `demiurge verify --json --home H` as a child: exit 0 and its report, or the problems it lists. */
export async function verifyHome(
  home: string,
): Promise<{ ok: boolean; ms: number; problems: { check: string; detail: string }[] }> {
  const started = Date.now();
  const run = await demiurge(['verify', '--json', '--home', home]);
  return { ...verifyProblems(run), ms: Date.now() - started };
}
