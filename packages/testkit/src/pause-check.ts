import type { RecordedEvent } from '@demiurge/contracts';

/** Ends a pause: the run continues, is being cancelled, or ended. */
const PAUSE_ENDS = new Set(['run.resumed', 'run.cancel_requested', 'run.completed', 'run.failed', 'run.cancelled']);
/** The outcome of a step: a model round recorded, or a tool call settled (run, denied, unknown). */
const STEP_OUTCOMES = new Set([
  'turn.model_responded',
  'tool_call.succeeded',
  'tool_call.failed',
  'tool_call.cancelled',
  'tool_call.unknown',
  'tool_call.denied',
]);

/** One pause of a run, from `run.paused` to what ends it. */
interface Pause {
  /** Step outcomes recorded during the pause (at most the step under way when it came). */
  outcomes: number;
  /** The run changed owner during the pause: the step under way is gone with the old one. */
  ownerChanged: boolean;
}

/**
 * The pause rule, read from the log: a paused run starts no step until `run.resumed` (or a cancel), across
 * crashes, restarts and takeovers. The step under way when the pause came (one model round, one tool call, or
 * the wait on its approval) may still be recorded, once, by the owner that ran it; no `tool_call.started`, no
 * second step, and nothing from an owner that claimed the run while it was paused.
 * @example
 * const check = new PausedRunsCheck();
 * for await (const e of store.iterate()) problems.push(...check.next(e));
 */
export class PausedRunsCheck {
  private readonly paused = new Map<string, Pause>();
  /** Pauses ended by `run.resumed` so far. */
  resumed = 0;

  /** Feeds the next event of the log (in order); returns what it breaks, one line each. */
  next(event: RecordedEvent): string[] {
    if (event.streamType === 'run') {
      if (event.type === 'run.paused') this.paused.set(event.streamId, { outcomes: 0, ownerChanged: false });
      else if (PAUSE_ENDS.has(event.type)) {
        if (event.type === 'run.resumed' && this.paused.has(event.streamId)) this.resumed++;
        this.paused.delete(event.streamId);
      } else if (event.type === 'run.owner_claimed' || event.type === 'run.owner_lease_expired') {
        const pause = this.paused.get(event.streamId);
        if (pause) pause.ownerChanged = true;
      }
      return [];
    }
    const runId = event.meta.runId;
    const pause = runId ? this.paused.get(runId) : undefined;
    if (!pause) return [];
    const what = `${event.type} (${event.streamId}, position ${event.position})`;
    if (event.type === 'tool_call.started') return [`run ${runId} is paused but started a step: ${what}`];
    if (!STEP_OUTCOMES.has(event.type)) return [];
    pause.outcomes++;
    if (pause.ownerChanged) return [`run ${runId} is paused and changed owner, but its new owner recorded ${what}`];
    if (pause.outcomes > 1) return [`run ${runId} is paused but recorded a second step: ${what}`];
    return [];
  }
}
