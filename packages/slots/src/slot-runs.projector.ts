import { asDomainEvent, type RecordedEvent, slotEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';

/** One slot invocation as the log tells it. */
export interface SlotRunView {
  readonly slotRunId: string;
  readonly sessionId: string;
  readonly turnId: string | null;
  readonly coreId: string;
  readonly slotId: string;
  readonly phase: 'bootstrap' | 'input' | 'output';
  readonly mode: 'serial' | 'parallel';
  readonly status: 'running' | 'finished' | 'failed' | 'timed_out';
  /** For a failed or timed-out run: whether the turn continued (`soft`) or failed (`hard`). */
  readonly policy: 'soft' | 'hard' | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

/** Whether a session's bootstrap slot has done its once-per-session run. */
export interface BootstrapView {
  readonly sessionId: string;
  readonly slotId: string;
  /** Invocations started so far. */
  readonly runs: number;
  /** True once a run finished, or ended soft (the turn went on): the slot does not run again. */
  readonly done: boolean;
  readonly lastSlotRunId: string;
  /** When the last run started, while it has not ended (a host is running it, or crashed while it did). */
  readonly runningSince: string | null;
}

/** Collections of the `slot-runs` projector. */
export const SlotRunCollections = {
  runs: 'runs',
  /** `<sessionId>/<slotId>` → {@link BootstrapView}. */
  bootstrap: 'bootstrap',
} as const;

export const bootstrapKey = (sessionId: string, slotId: string) => `${sessionId}/${slotId}`;

/** Whether an ended run lets the session go on without running the slot again. */
export function endsBootstrap(recorded: RecordedEvent): boolean {
  const event = asDomainEvent(recorded);
  if (event.type === 'slot.finished') return true;
  if (event.type === 'slot.failed' || event.type === 'slot.timed_out') {
    return event.data.policy === 'soft';
  }
  return false;
}

/**
 * Slot runs and the bootstrap record of each session (which bootstrap slots have run). An end event for a
 * run it never saw start is ignored.
 */
export const slotRunsProjector = defineProjector({
  name: 'slot-runs',
  version: 1,
  handles: slotEvents.map((e) => e.type),
  apply(recorded, tx) {
    const event = asDomainEvent(recorded);
    if (event.type === 'slot.started') {
      const d = event.data;
      const run: SlotRunView = {
        slotRunId: d.slotRunId,
        sessionId: d.sessionId,
        turnId: d.turnId ?? null,
        coreId: d.coreId,
        slotId: d.slotId,
        phase: d.phase,
        mode: d.mode,
        status: 'running',
        policy: null,
        error: null,
        startedAt: event.recordedAt,
        endedAt: null,
      };
      tx.put(SlotRunCollections.runs, d.slotRunId, run);
      if (d.phase === 'bootstrap') startBootstrap(tx, run);
      return;
    }
    if (event.type !== 'slot.finished' && event.type !== 'slot.failed' && event.type !== 'slot.timed_out') return;
    const { slotRunId } = event.data;
    const run = tx.get<SlotRunView>(SlotRunCollections.runs, slotRunId);
    if (run?.status !== 'running') return;
    const failure = event.type === 'slot.finished' ? undefined : event.data;
    const ended: SlotRunView = {
      ...run,
      status: event.type === 'slot.finished' ? 'finished' : event.type === 'slot.failed' ? 'failed' : 'timed_out',
      policy: failure?.policy ?? null,
      error:
        (failure && 'error' in failure ? failure.error : undefined) ??
        (event.type === 'slot.timed_out' ? { code: 'slot_timed_out', message: 'the slot ran past its timeout' } : null),
      endedAt: event.recordedAt,
    };
    tx.put(SlotRunCollections.runs, slotRunId, ended);
    if (run.phase === 'bootstrap') {
      const key = bootstrapKey(run.sessionId, run.slotId);
      const view = tx.get<BootstrapView>(SlotRunCollections.bootstrap, key);
      if (view) {
        tx.put(SlotRunCollections.bootstrap, key, {
          ...view,
          done: view.done || endsBootstrap(event),
          runningSince: view.lastSlotRunId === slotRunId ? null : view.runningSince,
        });
      }
    }
  },
});

function startBootstrap(tx: ProjectionTx, run: SlotRunView): void {
  const key = bootstrapKey(run.sessionId, run.slotId);
  const view = tx.get<BootstrapView>(SlotRunCollections.bootstrap, key);
  const next: BootstrapView = {
    sessionId: run.sessionId,
    slotId: run.slotId,
    runs: (view?.runs ?? 0) + 1,
    done: view?.done ?? false,
    lastSlotRunId: run.slotRunId,
    runningSince: run.startedAt,
  };
  tx.put(SlotRunCollections.bootstrap, key, next);
}
