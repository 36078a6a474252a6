import {
  type Actor,
  type Clock,
  DemiurgeError,
  ErrorCode,
  type IdGenerator,
  IdPrefix,
  type NewEvent,
  type RecordedEvent,
} from '@demiurge/contracts';
import { commandLoop, streamAppend } from '@demiurge/control-plane';
import { type AppendStream, type EventStore, StreamVersionConflictError } from '@demiurge/event-store';
import {
  checkEvents,
  type ToolCallEventType,
  type TurnEventType,
  toolCallLifecycle,
  turnLifecycle,
} from '@demiurge/lifecycle';
import { RunsCollections, type RunView, runsProjector } from '@demiurge/projector-runs';
import { type ChatMessage, collectCompletion, type ModelProvider } from '@demiurge/providers';
import type { RunLease, RunRuntime, SessionRuntime, TurnAdmission } from '@demiurge/sessions';
import type { z } from 'zod';
import type { ApprovalRuntime } from './approvals.js';
import { planModeDecision } from './policy.js';
import type { ToolRegistry } from './registry.js';
import type { EffectClass, ToolDefinition } from './tool.js';
import { loadTurn, type ToolCallRecord, type TurnRecord, type TurnSelection, toolResultText } from './turn-state.js';

/**
 * The Agent Core's slot phases around a turn (the host wires them to its SlotRuntime). `input` runs once,
 * before the turn is admitted: its context is recorded on `turn.started` (and `writeHistory` items as
 * messages of the turn), so a resume rebuilds it. `output` runs with the answer before the turn completes:
 * a hard failure fails the turn; when one of its sends carried the answer, that message is the turn's
 * output and the engine records no second copy.
 */
export interface TurnHooks {
  input?(turn: {
    sessionId: string;
    turnId: string;
    text: string;
    selection: TurnSelection | null;
  }): Promise<readonly { role: 'user' | 'system'; text: string; writeHistory: boolean }[]>;
  output?(turn: {
    sessionId: string;
    turnId: string;
    runId: string;
    text: string;
    signal: AbortSignal;
    selection: TurnSelection | null;
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
  readonly hooks?: TurnHooks;
  /**
   * The session's pending task notices (completions, blocked tasks), taken at each admission: merged into
   * the turn as context (or, for {@link TurnEngine.runNoticeTurn}, its input) and acknowledged by the
   * returned streams in the admission's own commit. `HostWorkLifecycleRuntime` is one.
   */
  readonly notices?: TurnNotices;
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
  /** Called once the input, run and turn are committed (admission), before the first model round. */
  readonly onAdmitted?: (ids: { readonly runId: string; readonly turnId: string }) => void;
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

/** The turn was stopped because its run is being cancelled. */
class RunCancelling extends Error {}

/** The engine is closing: no new turn starts, running turns are released for the next host. */
export class EngineClosingError extends DemiurgeError {
  override readonly name = 'EngineClosingError';
  readonly code = ErrorCode.Closing;
  constructor() {
    super('the host is closing: no new turn is admitted');
  }
}

/** The abort reason of a turn stopped by {@link TurnEngine.close}. */
class HostClosing extends Error {
  constructor() {
    super('the host closed while the call ran');
  }
}

/** Why a tool call's arguments were refused, for the model: the field, the problem, and for an unknown key the accepted ones. */
function invalidArguments(name: string, tool: ToolDefinition, issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues[0];
  const where = issue?.path.join('.') || '(root)';
  if (issue?.code === 'unrecognized_keys') {
    const shape = (tool.input as { shape?: Record<string, unknown> }).shape;
    const accepted = shape ? `; accepted keys: ${Object.keys(shape).join(', ')}` : '';
    return `invalid ${name} arguments at ${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${accepted}`;
  }
  return `invalid ${name} arguments at ${where}: ${issue?.message}`;
}

const TURN = turnLifecycle.streamType;
const TOOL_CALL = toolCallLifecycle.streamType;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The foreground provider/tool loop for one turn (seed 003 TurnEngine). Every fact is an event committed
 * before anything acts on it: the user input with the turn and run, each model round whole
 * (`turn.model_responded`, with its tool calls requested and a run checkpoint), each tool call started
 * before it runs and settled after. {@link resume} rebuilds a turn from the log alone, so a new owner
 * continues where the log says: a recorded model round is never requested again, a started call
 * without an outcome becomes `unknown` and is never re-run.
 */
export class TurnEngine {
  readonly stepBudget: number;
  private readonly live = new Map<string, AbortController>();
  private readonly drives = new Set<Promise<unknown>>();
  /** The drive of each run this engine is executing (a paused one included: it waits at its boundary). */
  private readonly driving = new Map<string, Promise<TurnOutcome>>();
  private closing = false;

  constructor(private readonly options: TurnEngineOptions) {
    this.stepBudget = options.stepBudget ?? 90;
  }

  /** Admits a user input (one turn at a time per session) and runs its turn to an outcome. */
  async runTurn(input: TurnInput): Promise<TurnOutcome> {
    if (this.closing) throw new EngineClosingError();
    const session = await this.options.sessions.get(input.sessionId);
    const interrupt =
      session.busyMode === 'interrupt'
        ? async () => {
            for (const [runId, ctrl] of this.live) {
              const run = await this.options.runs.load(runId);
              if (run.sessionId === input.sessionId) {
                await this.options.runs.requestCancel(runId, 'interrupted by a new input');
                ctrl.abort();
              }
            }
          }
        : undefined;
    return this.options.admission.run(input.sessionId, () => this.start(input), interrupt);
  }

  /**
   * Continues a run from the log (after a restart, a lease expiry, a pause or an approval): claims
   * ownership when this host does not hold it, then drives the run's current turn.
   */
  async resume(runId: string, lease?: RunLease, options: { ownerDead?: boolean } = {}): Promise<TurnOutcome> {
    if (this.closing) throw new EngineClosingError();
    const driving = this.driving.get(runId);
    if (driving) return driving; // this engine executes it already (e.g. waiting at a pause): the same outcome
    const owned = lease ?? (await this.options.runs.claimOwnership(runId, options));
    const run = await this.options.runs.get(runId);
    const turnId = await this.currentTurnId(runId);
    if (!run.sessionId || !turnId) throw new Error(`run ${runId} has no turn to resume`);
    return this.options.admission.run(run.sessionId, () => this.drive(owned, turnId));
  }

  /**
   * A completion turn: admits a turn whose input is the session's pending task notices (one turn at a time
   * per session, after any input already waiting), acknowledging them in the admission's commit. Resolves
   * undefined, admitting nothing, when no notice is pending by then (an earlier input took them).
   */
  async runNoticeTurn(input: Omit<TurnInput, 'text'>): Promise<TurnOutcome | undefined> {
    if (this.closing) throw new EngineClosingError();
    return this.options.admission.run(input.sessionId, () => this.start({ ...input, text: '' }, true));
  }

  /** Whether a turn of the session runs or waits for admission in this engine. */
  isBusy(sessionId: string): boolean {
    return this.options.admission.isBusy(sessionId);
  }

  /** Runs this engine is driving now. */
  liveRuns(): string[] {
    return [...this.live.keys()];
  }

  /**
   * Closes admission (new turns and resumes are refused), lets running turns finish for up to `drainMs`,
   * then stops the rest: an in-flight tool call is settled as cancelled, and the run's owner lease is
   * released (`run.owner_lease_expired`) so the next host start resumes it at once.
   */
  async close(options: { drainMs?: number } = {}): Promise<void> {
    this.closing = true;
    const drained = Promise.allSettled([...this.drives]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, options.drainMs ?? 5_000)))]);
    clearTimeout(timer);
    for (const ctrl of this.live.values()) ctrl.abort(new HostClosing());
    await Promise.allSettled([...this.drives]);
  }

  /**
   * Requests cancellation; the owner (this process or another) settles and ends the run. `by`, the principal
   * asking, is checked against the run's owner (`RunNotOwnedError`) and recorded as the actor.
   */
  async cancel(runId: string, reason: string, by?: Actor): Promise<void> {
    await this.options.runs.requestCancel(runId, reason, by);
    this.live.get(runId)?.abort();
  }

  /**
   * Pauses at the next step boundary: the step under way (a model round, a running tool call) finishes and is
   * recorded, then the owner waits, keeping its lease, until `run.resumed` (from any process: the log is
   * watched) or a cancel. The turn's outcome settles only when the run ends.
   */
  async pause(runId: string, reason: string): Promise<void> {
    await this.options.runs.pause(runId, reason);
  }

  private start(input: TurnInput): Promise<TurnOutcome>;
  private start(input: TurnInput, fromNotices: true): Promise<TurnOutcome | undefined>;
  private async start(input: TurnInput, fromNotices = false): Promise<TurnOutcome | undefined> {
    const { ids, runs, sessions } = this.options;
    const turnId = ids.next(IdPrefix.turn);
    const consumer = { sessionId: input.sessionId, via: `turn ${turnId}` };
    const noticeText = (notices: readonly { text: string }[]) => notices.map((n) => n.text).join('\n\n');
    let text = input.text;
    if (fromNotices) {
      const peek = await this.takeNotices(consumer);
      if (peek.notices.length === 0) return undefined;
      text = noticeText(peek.notices);
    }
    const context =
      (await this.options.hooks?.input?.({
        sessionId: input.sessionId,
        turnId,
        text,
        selection: input.selection ?? null,
      })) ?? [];
    const { runId, lease, stream: runStream } = runs.startStream(input.sessionId, input.actor);
    // Admission: the input, the run, the turn and the acknowledgement of the notices it carries, in one commit
    // (re-read when another writer moved the session or a notice in between).
    for (let attempt = 1; ; attempt++) {
      const taken = await this.takeNotices(consumer);
      if (fromNotices && taken.notices.length === 0) return undefined;
      const inputText = fromNotices ? noticeText(taken.notices) : text;
      const merged = fromNotices
        ? []
        : taken.notices.map((n) => ({ role: 'system' as const, text: n.text, writeHistory: true }));
      const turnContext = [...context, ...merged];
      // Message ids are time-sortable and the transcript lists by id: the context first, then the input.
      const contextMessages = turnContext
        .filter((c) => c.writeHistory)
        .map((c) =>
          sessions.messageEvent({
            sessionId: input.sessionId,
            role: c.role,
            text: c.text,
            turnId,
            messageId: ids.next(IdPrefix.message),
          }),
        );
      const messageId = ids.next(IdPrefix.message);
      const sessionStream = await sessions.sessionStream(input.sessionId, [
        ...contextMessages,
        sessions.messageEvent({ sessionId: input.sessionId, role: 'user', text: inputText, turnId, messageId }),
      ]);
      const turnStream: AppendStream = {
        streamType: TURN,
        streamId: turnId,
        expectedVersion: 'no_stream',
        events: [
          {
            type: 'turn.started',
            data: {
              turnId,
              sessionId: input.sessionId,
              runId,
              inputMessageId: messageId,
              ...(turnContext.length > 0 ? { context: turnContext.map((c) => ({ role: c.role, text: c.text })) } : {}),
              ...(input.selection ? { selection: input.selection as never } : {}),
            },
          },
        ],
      };
      const actor = fromNotices
        ? { kind: 'system' as const, id: 'completion-notices' }
        : (input.actor ?? { kind: 'user' as const, id: input.sessionId });
      try {
        await this.options.store.append([sessionStream, runStream, turnStream, ...taken.streams], {
          meta: { actor, sessionId: input.sessionId, runId, turnId },
        });
        break;
      } catch (err) {
        if (!(err instanceof StreamVersionConflictError) || attempt >= 5) throw err;
      }
    }
    const driving = this.drive(lease, turnId);
    input.onAdmitted?.({ runId, turnId });
    return driving;
  }

  private async takeNotices(consumer: { sessionId: string; via: string }) {
    return (await this.options.notices?.takeTaskCompletions(consumer)) ?? { notices: [], streams: [] };
  }

  private drive(lease: RunLease, turnId: string): Promise<TurnOutcome> {
    const run = this.loop(lease, turnId);
    this.drives.add(run);
    this.driving.set(lease.runId, run);
    void run
      .finally(() => {
        this.drives.delete(run);
        if (this.driving.get(lease.runId) === run) this.driving.delete(lease.runId);
      })
      .catch(() => undefined);
    return run;
  }

  /** The loop: settle what the log says is pending, then ask the model, until the turn ends. */
  private async loop(lease: RunLease, turnId: string): Promise<TurnOutcome> {
    const runId = lease.runId;
    const ctrl = new AbortController();
    this.live.set(runId, ctrl);
    const watch = this.options.store.events$.subscribe((event: RecordedEvent) => {
      // A cancel stops the call in flight; a pause does not (it is honoured at the next step boundary).
      if (event.streamId === runId && event.type === 'run.cancel_requested') ctrl.abort();
    });
    let current = lease;
    const beat = setInterval(
      () => {
        this.options.runs.heartbeat(current).then(
          (next) => {
            current = next;
          },
          () => ctrl.abort(),
        );
      },
      Math.max(1000, this.options.runs.leaseMs / 3),
    );
    beat.unref?.();
    try {
      for (;;) {
        const run = await this.options.runs.load(runId);
        const turn = await loadTurn(this.options.store, turnId);
        if (turn.state !== 'running') return this.outcomeOf(turn, runId);
        if (run.state === 'cancelling') return await this.settleCancel(current, turn, run.reason ?? 'cancelled');
        if (run.state === 'paused') {
          await this.whilePaused(runId, ctrl.signal);
          continue;
        }
        const last = turn.steps.at(-1);
        const pending = last?.calls.filter((c) => c.state === 'requested' || c.state === 'started') ?? [];
        // A waiting run with a requested call is waiting for that call's approval: settleCall waits on it.
        if ((run.state === 'waiting' && pending.length === 0) || run.state === 'blocked') {
          return this.stopped(turn, runId, 'waiting');
        }
        if (pending.length > 0) {
          for (const call of pending) await this.settleCall(current, turn, last!.stepId, call, ctrl.signal);
          continue;
        }
        if (last && last.calls.length === 0) return await this.finish(current, turn, last.content, ctrl.signal);
        if (turn.steps.length >= this.stepBudget) return await this.budgetExhausted(current, turn);
        await this.modelRound(current, turn, ctrl.signal);
      }
    } catch (err) {
      if (ctrl.signal.reason instanceof HostClosing) return await this.release(current, turnId);
      if (err instanceof RunCancelling || ctrl.signal.aborted) {
        const run = await this.options.runs.load(runId);
        const turn = await loadTurn(this.options.store, turnId);
        if (run.state === 'cancelling') return await this.settleCancel(current, turn, run.reason ?? 'cancelled');
        if (run.state === 'paused') return this.stopped(turn, runId, 'paused');
      }
      if (err instanceof DemiurgeError && err.code.startsWith('provider_')) {
        return await this.fail(current, turnId, { code: err.code, message: err.message });
      }
      throw err;
    } finally {
      clearInterval(beat);
      watch.unsubscribe();
      this.live.delete(runId);
    }
  }

  /** One model round: ask the provider, then record the whole response with its requested tool calls. */
  private async modelRound(lease: RunLease, turn: TurnRecord, signal: AbortSignal): Promise<void> {
    const { provider, tools, ids } = this.options;
    const messages = await this.transcript(turn);
    const allowed = turn.selection?.tools;
    const specs = tools.specs().filter((t) => !allowed || allowed.includes(t.name));
    const completion = await collectCompletion(provider.complete({ messages, tools: specs, signal }));
    const stepId = `s${turn.steps.length + 1}`;
    const calls = completion.toolCalls.map((c) => ({
      callId: c.id,
      toolCallId: ids.next(IdPrefix.toolCall),
      name: c.name,
      arguments: (c.arguments ?? {}) as never,
      ...(c.argumentsError !== undefined ? { argumentsError: c.argumentsError } : {}),
    }));
    const turnEvent: NewEvent<TurnEventType> = {
      type: 'turn.model_responded',
      data: {
        turnId: turn.streamId,
        runId: lease.runId,
        stepId,
        provider: provider.name,
        model: provider.model,
        content: completion.content,
        toolCalls: calls,
        usage: completion.usage,
      },
    };
    const callStreams: AppendStream[] = calls.map((c) => {
      const tool = tools.get(c.name);
      return {
        streamType: TOOL_CALL,
        streamId: c.toolCallId,
        expectedVersion: 'no_stream',
        events: [
          {
            type: 'tool_call.requested',
            data: {
              toolCallId: c.toolCallId,
              sessionId: turn.sessionId!,
              turnId: turn.streamId,
              stepId,
              tool: c.name,
              idempotent: tool?.idempotent ?? false,
              runId: lease.runId,
              arguments: c.arguments,
              ...(c.argumentsError !== undefined ? { argumentsError: c.argumentsError } : {}),
              ...(tool && c.argumentsError === undefined ? { effect: tool.effect } : {}),
            },
          },
        ],
      };
    });
    await this.options.runs.ownedAppend(lease, (run) => {
      if (run.state === 'cancelling') throw new RunCancelling();
      return {
        run: [
          {
            type: 'run.checkpointed',
            data: { runId: lease.runId, checkpointId: `${turn.streamId}/${stepId}`, stage: 'model_round' },
          },
        ],
        also: [
          streamAppend(TURN, turn, checkEvents(turnLifecycle, turn.state, [turnEvent], turn.streamId)),
          ...callStreams,
        ],
      };
    });
  }

  /** Takes one tool call from where its record is to an outcome. */
  private async settleCall(
    lease: RunLease,
    turn: TurnRecord,
    stepId: string,
    call: ToolCallRecord,
    signal: AbortSignal,
  ): Promise<void> {
    if (call.state === 'started') {
      // Started by an owner that is gone, no outcome recorded: it may have taken effect. Never re-run it.
      await this.toolEvents(lease, call, [
        {
          type: 'tool_call.unknown',
          data: { toolCallId: call.streamId, reason: 'the host stopped while the call ran' },
        },
      ]);
      return;
    }
    // A pause is honoured between calls: a call not started yet waits for the resume (the loop waits).
    if ((await this.options.runs.load(lease.runId)).state === 'paused') return;
    const { tools, sessions, approvals } = this.options;
    const allowed = turn.selection?.tools;
    const tool = !allowed || allowed.includes(call.name) ? tools.get(call.name) : undefined;
    const fail = (code: string, message: string) =>
      this.toolEvents(lease, call, [
        { type: 'tool_call.started', data: { toolCallId: call.streamId } },
        { type: 'tool_call.failed', data: { toolCallId: call.streamId, error: { code, message } } },
      ]);
    if (!tool) {
      const names = tools.names().filter((n) => !allowed || allowed.includes(n));
      return fail(ErrorCode.ToolFailed, `no tool named ${call.name} in this turn; tools: ${names.join(', ')}`);
    }
    if (call.argumentsError !== null) {
      // The model wrote bad JSON: answer with the parse error (the model corrects itself), never run the tool.
      return fail(
        ErrorCode.ToolFailed,
        `invalid ${call.name} arguments: ${call.argumentsError}; call ${call.name} again with a JSON object`,
      );
    }
    const parsed = tool.input.safeParse(call.arguments);
    if (!parsed.success) return fail(ErrorCode.ToolFailed, invalidArguments(call.name, tool, parsed.error.issues));
    const effect: EffectClass = tool.effectOf?.(parsed.data) ?? tool.effect;
    const session = await sessions.get(turn.sessionId!);
    const decision = planModeDecision(session.mode, call.name, effect);
    const also: AppendStream[] = [];
    if (!decision.allowed) {
      const approval = await approvals.findUsable(turn.sessionId!, call.name, call.arguments);
      if (approval) {
        also.push(await approvals.consumeStream(approval.approvalId, call.streamId));
      } else if (this.options.onPlanModeWrite === 'ask') {
        const answered = await this.askApproval(lease, turn, call, decision.reason, signal);
        if (!answered) return;
        // Paused while it waited: the call does not start now; at resume the granted approval is found again.
        if ((await this.options.runs.load(lease.runId)).state === 'paused') return;
        also.push(await approvals.consumeStream(answered, call.streamId));
      } else {
        await this.toolEvents(lease, call, [
          {
            type: 'tool_call.denied',
            data: { toolCallId: call.streamId, policy: decision.policy, reason: decision.reason },
          },
        ]);
        return;
      }
    }
    await this.toolEvents(
      lease,
      call,
      [{ type: 'tool_call.started', data: { toolCallId: call.streamId } }],
      also,
      'tool_started',
    );
    const current = async () =>
      (await loadTurn(this.options.store, turn.streamId)).steps
        .find((s) => s.stepId === stepId)!
        .calls.find((c) => c.streamId === call.streamId)!;
    let events: NewEvent<ToolCallEventType>[];
    try {
      const result = await tool.run(parsed.data, {
        workspaceRoot: this.options.workspaceRoot,
        signal,
        sessionId: turn.sessionId!,
        turnId: turn.streamId,
        runId: lease.runId,
        toolCallId: call.streamId,
        // A spawned process group is recorded before its command runs: the next host start finds an orphan.
        onProcessStarted: async (p) => {
          const data = {
            toolCallId: call.streamId,
            spawnId: p.spawnId,
            host: this.options.runs.owner,
            pid: p.pid,
            pgid: p.pgid,
            platform: p.platform,
            ...(p.startMarker ? { startMarker: p.startMarker } : {}),
          };
          await this.toolEvents(
            lease,
            await current(),
            [{ type: 'tool_call.process_started', data }],
            [],
            undefined,
            true,
          );
        },
      });
      events = [{ type: 'tool_call.succeeded', data: { toolCallId: call.streamId, output: result.output } }];
    } catch (err) {
      events = signal.aborted
        ? [
            {
              type: 'tool_call.cancelled',
              data: { toolCallId: call.streamId, reason: 'the run was cancelled while the call ran' },
            },
          ]
        : [
            {
              type: 'tool_call.failed',
              data: {
                toolCallId: call.streamId,
                error: {
                  code: err instanceof DemiurgeError ? err.code : ErrorCode.ToolFailed,
                  message: (err as Error).message || String(err),
                },
              },
            },
          ];
    }
    // The outcome is recorded even when the run is cancelling: settling in-flight calls is the cancel contract.
    await this.toolEvents(lease, await current(), events, [], 'tool_result', true);
  }

  /** Requests an approval and waits for the answer; the approval id when granted, undefined when denied. */
  private async askApproval(
    lease: RunLease,
    turn: TurnRecord,
    call: ToolCallRecord,
    reason: string,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const { approvals, clock } = this.options;
    const ttl = this.options.approvalTtlMs ?? 15 * 60_000;
    // After a restart the approval may already exist (the run is waiting on it): wait on that one.
    const existing = (await approvals.listForSession(turn.sessionId!)).find((a) => a.toolCallId === call.streamId);
    let approvalId: string;
    let waitMs = ttl;
    if (existing) {
      approvalId = existing.approvalId;
      if (existing.expiresAt) waitMs = Math.max(0, Date.parse(existing.expiresAt) - clock.now());
    } else {
      const request = approvals.requestStream({
        sessionId: turn.sessionId!,
        runId: lease.runId,
        toolCallId: call.streamId,
        tool: call.name,
        arguments: call.arguments,
        reason,
        expiresAt: iso(clock.now() + ttl),
      });
      approvalId = request.approvalId;
      await this.options.runs.ownedAppend(lease, (run) => ({
        // Paused meanwhile: the approval is still requested; the run stays paused (resume finds it waiting on it).
        run:
          run.state === 'running'
            ? [{ type: 'run.waiting', data: { runId: lease.runId, reason: `approval ${approvalId} for ${call.name}` } }]
            : [],
        also: [request.stream],
      }));
    }
    const status = await this.waitForApproval(approvalId, waitMs, signal);
    await this.options.runs.ownedAppend(lease, (run) =>
      run.state === 'waiting' ? { run: [{ type: 'run.resumed', data: { runId: lease.runId } }] } : { run: [] },
    );
    if (status === 'granted') return approvalId;
    if (status === 'requested') await this.options.approvals.expire(approvalId);
    await this.toolEvents(lease, call, [
      {
        type: 'tool_call.denied',
        data: {
          toolCallId: call.streamId,
          policy: 'plan_mode',
          reason: `${reason} (approval ${approvalId} was ${status === 'requested' ? 'not answered in time' : status})`,
        },
      },
    ]);
    return undefined;
  }

  private async waitForApproval(approvalId: string, ttlMs: number, signal: AbortSignal): Promise<string> {
    const current = async () =>
      (await this.options.approvals.get(approvalId).catch(() => undefined))?.status ?? 'requested';
    return new Promise<string>((resolve, reject) => {
      const done = (value: string | Error) => {
        sub.unsubscribe();
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (value instanceof Error) reject(value);
        else resolve(value);
      };
      const onAbort = () => done(new RunCancelling());
      const sub = this.options.store.events$.subscribe((event: RecordedEvent) => {
        if (event.streamId !== approvalId) return;
        if (event.type === 'approval.granted') done('granted');
        else if (event.type === 'approval.denied') done('denied');
        else if (event.type === 'approval.expired') done('expired');
      });
      const timer = setTimeout(() => done('requested'), ttlMs);
      signal.addEventListener('abort', onAbort);
      void current().then((s) => {
        if (s !== 'requested') done(s);
      });
    });
  }

  /** Appends tool-call events with a run checkpoint, fenced by the run lease. */
  private async toolEvents(
    lease: RunLease,
    call: ToolCallRecord,
    events: NewEvent<ToolCallEventType>[],
    also: AppendStream[] = [],
    stage?: string,
    evenWhenCancelling = false,
  ): Promise<void> {
    await this.options.runs.ownedAppend(lease, (run) => {
      if (run.state === 'cancelling' && !evenWhenCancelling) throw new RunCancelling();
      return {
        run: stage
          ? [
              {
                type: 'run.checkpointed',
                data: { runId: lease.runId, checkpointId: `${call.streamId}/${stage}`, stage },
              },
            ]
          : [],
        also: [
          streamAppend(TOOL_CALL, call, checkEvents(toolCallLifecycle, call.state, events, call.streamId)),
          ...also,
        ],
      };
    });
  }

  /**
   * What the model is sent. All system content — the core's instructions, system messages of the history
   * (fork context, slot context kept in history) and this turn's system context — is merged, in that order,
   * into one leading system message: servers with strict chat templates refuse a system message anywhere
   * but first. The rest keeps its order: history, this turn's user context, the input, the model rounds.
   */
  private async transcript(turn: TurnRecord): Promise<ChatMessage[]> {
    const system: string[] = [];
    const messages: ChatMessage[] = [];
    if (this.options.instructions) system.push(this.options.instructions);
    let input: string | undefined;
    for (const entry of await this.options.sessions.history(turn.sessionId!, { forModel: true })) {
      if (entry.turnId === turn.streamId) {
        if (entry.messageId === turn.inputMessageId) input = entry.text;
        continue; // this turn's own messages: its context and input come next, in order
      }
      if (entry.role === 'system') system.push(entry.text);
      else if (entry.role === 'user') messages.push({ role: 'user', content: entry.text });
      else if (entry.role === 'assistant') messages.push({ role: 'assistant', content: entry.text });
    }
    for (const c of turn.context) {
      if (c.role === 'system') system.push(c.text);
      else messages.push({ role: c.role, content: c.text });
    }
    if (input !== undefined) messages.push({ role: 'user', content: input });
    if (system.length > 0) messages.unshift({ role: 'system', content: system.join('\n\n') });
    for (const step of turn.steps) {
      messages.push({
        role: 'assistant',
        content: step.content,
        toolCalls: step.calls.map((c) => ({
          id: c.callId,
          name: c.name,
          arguments: c.arguments,
          ...(c.argumentsError !== null ? { argumentsError: c.argumentsError } : {}),
        })),
      });
      for (const call of step.calls) {
        messages.push({ role: 'tool', toolCallId: call.callId, name: call.name, content: toolResultText(call) });
      }
    }
    return messages;
  }

  /**
   * The last model round asked for no tools: its text is the answer. The output slots (if any) run first
   * and may send it; the answer is recorded once (by the send that carried it, else here).
   */
  private async finish(lease: RunLease, turn: TurnRecord, text: string, signal: AbortSignal): Promise<TurnOutcome> {
    let answerMessageId: string | undefined;
    if (this.options.hooks?.output) {
      try {
        ({ answerMessageId } = await this.options.hooks.output({
          sessionId: turn.sessionId!,
          turnId: turn.streamId,
          runId: lease.runId,
          text,
          signal,
          selection: turn.selection,
        }));
      } catch (err) {
        if (err instanceof RunCancelling) throw err;
        const code = (err as { code?: unknown }).code;
        return this.fail(lease, turn.streamId, {
          code: typeof code === 'string' ? code : 'slot_failed',
          message: (err as Error).message || String(err),
        });
      }
    }
    const messageId = answerMessageId ?? this.options.ids.next(IdPrefix.message);
    const answer = answerMessageId
      ? []
      : [
          this.options.sessions.messageEvent({
            sessionId: turn.sessionId!,
            role: 'assistant',
            text,
            turnId: turn.streamId,
            messageId,
          }),
        ];
    const usage = turn.steps.reduce(
      (u, s) => ({
        inputTokens: u.inputTokens + s.usage.inputTokens,
        outputTokens: u.outputTokens + s.usage.outputTokens,
      }),
      { inputTokens: 0, outputTokens: 0 },
    );
    // The session is read inside the owned append: a retry after another writer moved it reads it again.
    await this.options.runs.ownedAppend(lease, async () => ({
      run: [{ type: 'run.completed', data: { runId: lease.runId } }],
      also: [
        ...(answer.length > 0 ? [await this.options.sessions.sessionStream(turn.sessionId!, answer)] : []),
        streamAppend(
          TURN,
          turn,
          checkEvents(turnLifecycle, turn.state, [
            {
              type: 'turn.completed',
              data: { turnId: turn.streamId, sessionId: turn.sessionId!, outputMessageId: messageId, usage },
            },
          ]),
        ),
      ],
    }));
    return { turnId: turn.streamId, runId: lease.runId, status: 'completed', text, steps: turn.steps.length };
  }

  private async budgetExhausted(lease: RunLease, turn: TurnRecord): Promise<TurnOutcome> {
    const message =
      `Stopped: this turn used its whole step budget of ${this.stepBudget} model rounds without a final answer. ` +
      'Send a new message to continue from here.';
    const messageId = this.options.ids.next(IdPrefix.message);
    const error = { code: ErrorCode.BudgetExhausted, message };
    await this.options.runs.ownedAppend(lease, async () => ({
      run: [{ type: 'run.failed', data: { runId: lease.runId, error } }],
      also: [
        await this.options.sessions.sessionStream(turn.sessionId!, [
          this.options.sessions.messageEvent({
            sessionId: turn.sessionId!,
            role: 'assistant',
            text: message,
            turnId: turn.streamId,
            messageId,
          }),
        ]),
        streamAppend(
          TURN,
          turn,
          checkEvents(turnLifecycle, turn.state, [
            { type: 'turn.failed', data: { turnId: turn.streamId, sessionId: turn.sessionId!, error } },
          ]),
        ),
      ],
    }));
    return {
      turnId: turn.streamId,
      runId: lease.runId,
      status: 'failed',
      text: message,
      error,
      steps: turn.steps.length,
    };
  }

  private async fail(lease: RunLease, turnId: string, error: { code: string; message: string }): Promise<TurnOutcome> {
    const turn = await loadTurn(this.options.store, turnId);
    await this.options.runs.ownedAppend(lease, () => ({
      run: [{ type: 'run.failed', data: { runId: lease.runId, error } }],
      also: [
        streamAppend(
          TURN,
          turn,
          checkEvents(turnLifecycle, turn.state, [
            { type: 'turn.failed', data: { turnId, sessionId: turn.sessionId!, error } },
          ]),
        ),
      ],
    }));
    return { turnId, runId: lease.runId, status: 'failed', text: error.message, error, steps: turn.steps.length };
  }

  /**
   * The cancel contract: no new dispatch; calls not started are cancelled, a started call with no outcome
   * (its owner died) is unknown; the run's child tasks are cancelled; the turn and run end with the reason.
   */
  private async settleCancel(lease: RunLease, turn: TurnRecord, reason: string): Promise<TurnOutcome> {
    for (const step of turn.steps) {
      for (const call of step.calls) {
        if (call.state === 'requested') {
          await this.toolEvents(
            lease,
            call,
            [{ type: 'tool_call.cancelled', data: { toolCallId: call.streamId, reason } }],
            [],
            undefined,
            true,
          );
        } else if (call.state === 'started' && !this.live.has(lease.runId)) {
          await this.toolEvents(
            lease,
            call,
            [{ type: 'tool_call.unknown', data: { toolCallId: call.streamId, reason } }],
            [],
            undefined,
            true,
          );
        }
      }
    }
    const settled = await loadTurn(this.options.store, turn.streamId);
    await this.options.runs.finishCancel(lease.runId, { reason, resumable: false }, () => [
      streamAppend(
        TURN,
        settled,
        checkEvents(turnLifecycle, settled.state, [
          { type: 'turn.cancelled', data: { turnId: turn.streamId, sessionId: turn.sessionId!, reason } },
        ]),
      ),
    ]);
    return {
      turnId: turn.streamId,
      runId: lease.runId,
      status: 'cancelled',
      text: `cancelled: ${reason}`,
      steps: turn.steps.length,
    };
  }

  /** The host is closing: give the run up (lease released) so the next host start resumes it at once. */
  private async release(lease: RunLease, turnId: string): Promise<TurnOutcome> {
    const turn = await loadTurn(this.options.store, turnId);
    await this.options.runs
      .ownedAppend(lease, (run) => ({
        run:
          run.owner && run.leaseToken
            ? [
                {
                  type: 'run.owner_lease_expired',
                  data: { runId: lease.runId, owner: run.owner, leaseToken: run.leaseToken },
                },
              ]
            : [],
      }))
      .catch(() => undefined); // another host took it already: nothing to release
    return { turnId, runId: lease.runId, status: 'interrupted', text: '', steps: turn.steps.length };
  }

  /**
   * Waits while the run is paused: until its stream says otherwise (`run.resumed`, or a cancel, from any
   * process: the store publishes other processes' commits too; a slow poll backs that up). Rejects when
   * `signal` aborts (a cancel, the host closing, the lease lost): the loop's catch settles that.
   */
  private whilePaused(runId: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const done = (error?: unknown) => {
        if (settled) return;
        settled = true;
        sub.unsubscribe();
        clearInterval(poll);
        signal.removeEventListener('abort', onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onAbort = () => done(signal.reason ?? new RunCancelling());
      const check = () => {
        this.options.runs.load(runId).then(
          (run) => {
            if (run.state !== 'paused') done();
          },
          (err: unknown) => done(err),
        );
      };
      const sub = this.options.store.events$.subscribe((event: RecordedEvent) => {
        if (event.streamId === runId && event.type !== 'run.owner_heartbeat') check();
      });
      const poll = setInterval(check, 1_000);
      poll.unref?.();
      signal.addEventListener('abort', onAbort);
      if (signal.aborted) onAbort();
      else check();
    });
  }

  private stopped(turn: TurnRecord, runId: string, status: 'paused' | 'waiting'): TurnOutcome {
    return { turnId: turn.streamId, runId, status, text: '', steps: turn.steps.length };
  }

  private outcomeOf(turn: TurnRecord, runId: string): TurnOutcome {
    const status = turn.state === 'completed' ? 'completed' : turn.state === 'cancelled' ? 'cancelled' : 'failed';
    return { turnId: turn.streamId, runId, status, text: turn.steps.at(-1)?.content ?? '', steps: turn.steps.length };
  }

  /** The run's latest turn, from the runs read model (turn streams are separate from the run stream). */
  private async currentTurnId(runId: string): Promise<string | undefined> {
    const view = await this.options.store.projection(runsProjector.name).get<RunView>(RunsCollections.runs, runId);
    return view?.turnIds.at(-1);
  }
}
