import type { Actor, Clock, IdGenerator, SessionMode, Timers } from '@demiurge/contracts';
import type { AppendStream, EventStore } from '@demiurge/event-store';
import type { ModelProvider } from '@demiurge/providers';
import type { OpenSessionSpec, RunRuntime, SessionRuntime, TurnAdmission } from '@demiurge/sessions';
import type { ApprovalRuntime } from '../approvals.js';
import type { ToolRegistry } from '../registry.js';
import type { TurnPin, TurnSelection } from '../turn-state.js';
import type { TurnEngineLogger } from './logger.js';

/**
 * The Agent Core's slot phases around a turn (the host wires them to its SlotRuntime). `input` runs once,
 * before the turn is admitted: its context is recorded on `turn.started` (and `writeHistory` items as
 * messages of the turn), so a resume rebuilds it. `output` runs with the answer before the turn completes:
 * a hard failure fails the turn; when one of its sends carried the answer, that message is the turn's
 * output and the engine records no second copy.
 */
export interface TurnHooks {
  /**
   * The turn's pin, asked once at admission before `input`: the core revision current now, its slots and the
   * tools. Recorded on `turn.started`; `input` and `output` get it back (a resume reads it from the log), so a
   * turn runs on the revision it was admitted with even when a newer one is saved meanwhile.
   */
  pin?(turn: { sessionId: string; selection: TurnSelection | null }): Promise<TurnPin>;
  /**
   * Asked before a run is resumed, with the pin its turn recorded (null in logs older than pins): throws, with
   * an explanation, when the turn cannot continue on it (its revision is gone). Nothing is claimed then.
   */
  resumable?(pin: TurnPin | null): Promise<void>;
  input?(turn: {
    sessionId: string;
    turnId: string;
    text: string;
    selection: TurnSelection | null;
    /** What {@link pin} returned for this turn (null without a `pin` hook). */
    pin: TurnPin | null;
    /** The session is opened by this turn's admission: it has no history (and no read model) yet. */
    opening: boolean;
    /** The history of a session this admission opens: its preamble (see {@link TurnInput.session}). */
    preamble?: readonly { role: 'system'; text: string }[];
  }): Promise<readonly { role: 'user' | 'system'; text: string; writeHistory: boolean }[]>;
  output?(turn: {
    sessionId: string;
    turnId: string;
    runId: string;
    text: string;
    signal: AbortSignal;
    selection: TurnSelection | null;
    /** The pin recorded on the turn's `turn.started` (null in older logs). */
    pin: TurnPin | null;
  }): Promise<{ answerMessageId?: string }>;
}

export interface TurnEngineOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly sessions: SessionRuntime;
  readonly runs: RunRuntime;
  readonly admission: TurnAdmission;
  readonly approvals: ApprovalRuntime;
  readonly provider: ModelProvider;
  readonly tools: ToolRegistry;
  /** The real path of the root file and shell tools are confined to. */
  readonly workspaceRoot: string;
  /** Model rounds per turn. Default 90. */
  readonly stepBudget?: number;
  /** The core's instructions, sent first as a system message. */
  readonly instructions?: string;
  /**
   * In plan mode, a mutating call without an approval is `deny` (denied at once, the default) or `ask`
   * (an approval is requested, the run waits for an operator's answer until `approvalTtlMs`).
   */
  readonly onPlanModeWrite?: 'deny' | 'ask';
  readonly approvalTtlMs?: number;
  /**
   * The timers of the engine's waits, in the clock's time: an unanswered approval's expiry (`approvalTtlMs`) and
   * the paused run's poll. Default the wall clock's (`systemTimers`); a simulation injects its virtual time, so
   * advancing its clock past an approval's expiry expires it.
   */
  readonly timers?: Timers;
  readonly hooks?: TurnHooks;
  /**
   * Context compaction: before a model round whose request (estimated) would pass `threshold` (default 0.8) of
   * the provider's context window, the older messages but the last `keepMessages` (default 4) are summarized by
   * the model and the session is compacted first. `enabled: false` turns the automatic step off (manual
   * compaction still works).
   */
  readonly compaction?: {
    readonly enabled?: boolean;
    readonly threshold?: number;
    readonly keepMessages?: number;
  };
  /**
   * The session's pending task notices (completions, blocked tasks), taken at each admission: merged into
   * the turn as context (or, for `TurnEngine.runNoticeTurn`, its input) and acknowledged by the
   * returned streams in the admission's own commit. `HostWorkLifecycleRuntime` is one.
   */
  readonly notices?: TurnNotices;
  /**
   * Where the engine reports what it cannot return to a caller (a lost lease, a release that failed while the
   * host closed). Default: one line on stderr per report.
   */
  readonly logger?: TurnEngineLogger;
}

/** Pending notices of a session, with the streams that acknowledge them (see {@link TurnEngineOptions.notices}). */
export interface TurnNotices {
  takeTaskCompletions(consumer: { sessionId: string; via: string }): Promise<{
    readonly notices: readonly { readonly text: string }[];
    readonly streams: readonly AppendStream[];
  }>;
}

export interface TurnInput {
  readonly sessionId: string;
  readonly text: string;
  /** A delegated turn's selections, recorded on turn.started (tools are filtered in the list and at dispatch). */
  readonly selection?: TurnSelection;
  /**
   * Who submits the input: recorded as the actor of the admission commit and as the run's principal (who owns
   * it, see `mayCancelRun` in @demiurge/sessions). Absent: the session's user, and no principal is recorded.
   */
  readonly actor?: Actor;
  /**
   * The root of this turn's file and shell tools instead of the engine's `workspaceRoot` (an evolve's working
   * copy); recorded on `turn.started`, so a resume keeps it.
   */
  readonly workspaceRoot?: string;
  /** The run's id, generated by the caller so it knows it before admission (default: a fresh one). */
  readonly runId?: string;
  /** The turn's id, generated by the caller (default: a fresh one). */
  readonly turnId?: string;
  /**
   * The session's own decisions, committed in the admission's one commit with the input, the run and the turn:
   * `open` opens the session `sessionId` names (a new id; a binding opened by another writer meanwhile is joined
   * instead), `mode` switches its plan-mode overlay where it differs.
   */
  readonly session?: {
    readonly open?: OpenSessionSpec;
    readonly mode?: SessionMode;
    /**
     * Messages of a session this admission opens, recorded first (before the input slots' context and the input),
     * of no turn: a forked child's context from its parent conversation. The input slots see them as history.
     */
    readonly preamble?: readonly { readonly role: 'system'; readonly text: string }[];
  };
  /**
   * More streams for the admission's one commit, built again on each attempt (after a version conflict): the
   * `task.started` of the task a child agent's turn belongs to. A refusal thrown here rejects `admitted`.
   */
  readonly also?: () => Promise<readonly AppendStream[]>;
}

/** A turn admitted: its session (the one joined, if its binding was opened elsewhere meanwhile), run and turn. */
export interface AdmittedTurn {
  readonly sessionId: string;
  readonly runId: string;
  readonly turnId: string;
}

/** A turn started by `TurnEngine.startTurn`: `admitted` once its admission is committed, `outcome` when it ends. */
export interface StartedTurn {
  /** Resolves once the input, run and turn are committed; rejects if the turn ends (or fails) before that. */
  readonly admitted: Promise<AdmittedTurn>;
  readonly outcome: Promise<TurnOutcome>;
}

export interface TurnOutcome {
  readonly turnId: string;
  readonly runId: string;
  /**
   * `paused` and `waiting` leave the run resumable; `interrupted` means this host closed and released the
   * run (the next host start resumes it); the others are final.
   */
  readonly status: 'completed' | 'failed' | 'cancelled' | 'paused' | 'waiting' | 'interrupted';
  /** The assistant's answer (or the budget/failure message). */
  readonly text: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly steps: number;
}

/** What the engine's modules share: the options with their defaults applied. */
export interface EngineDeps extends TurnEngineOptions {
  readonly stepBudget: number;
  readonly logger: TurnEngineLogger;
}
