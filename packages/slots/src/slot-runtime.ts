import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Clock, IdGenerator } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import type { SessionRuntime } from '@demiurge/sessions';
import type { AgentCore, SlotMode, SlotSpec } from './agent-core.js';
import type { BackgroundWorkRuntime } from './background-work.js';
import { bootstrapRecord } from './bootstrap-record.js';
import { type DeliverFn, fileMessageText } from './delivery-intents.js';
import { SlotFailedError, SlotPathError, SlotRuleError } from './errors.js';
import { isInside } from './paths.js';
import type { PhaseState } from './slot-context.js';
import { type InvocationEnv, type InvocationResult, invokeSlot, type SlotLogEntry } from './slot-invocation.js';
import { createSlotModuleLoader, type SlotModuleLoader } from './slot-module.js';
import type { ContextItem, HistoryEntry, SendResult } from './slot-sdk.js';

export interface SlotRuntimeOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly core: AgentCore;
  /** Gives input slots the session's model-visible history when `runInput` is not given one. */
  readonly sessions?: SessionRuntime;
  /** Records every send at once (the host wires {@link createDeliveryIntents}). */
  readonly deliver: DeliverFn;
  /** Where parallel slots run. */
  readonly background: BackgroundWorkRuntime;
  /** The directory `send_file` paths are resolved against and must stay in. Default: the core directory. */
  readonly workspaceRoot?: string;
  /** More directories `send_file` may send from. */
  readonly allowedDirs?: readonly string[];
  /** Lines slots log with `ctx.log`, and late errors of timed-out slots. Default: dropped. */
  readonly onLog?: (entry: SlotLogEntry) => void;
  /**
   * Where slot modules are imported from (one cache): share one between the runtimes of a core (e.g. per slot
   * selection) so each module is imported once. Default: a loader of this runtime's own.
   */
  readonly modules?: SlotModuleLoader;
}

/** How one serial slot invocation ended (`skipped`: another caller had started that bootstrap run). */
export interface SlotRunSummary {
  readonly slotId: string;
  readonly slotRunId: string;
  readonly status: InvocationResult['status'];
}

export interface PhaseRequest {
  readonly sessionId: string;
  readonly turnId?: string;
  /** The turn's cancellation: aborts `ctx.signal`, and no further serial slot starts. */
  readonly signal?: AbortSignal;
}

export interface InputRequest extends PhaseRequest {
  readonly turnId: string;
  readonly rawText: string;
  /** The session's model-visible history; default read from `sessions` (or none). */
  readonly history?: readonly HistoryEntry[];
}

export interface OutputRequest extends PhaseRequest {
  readonly turnId: string;
  readonly responseText: string;
  /** The user's input, readable by output slots as `ctx.input.raw_text`. */
  readonly rawText?: string;
  readonly history?: readonly HistoryEntry[];
}

export interface InputOutcome {
  /** The context the serial input slots added, in order; the host places it before the user's text. */
  readonly context: readonly ContextItem[];
  readonly runs: readonly SlotRunSummary[];
  /** The parallel slots started in the background. */
  readonly started: readonly string[];
}

export interface OutputOutcome {
  /** The response after the serial output slots (changed by `set_response_text`). */
  readonly responseText: string;
  /** What the serial output slots sent. */
  readonly sends: readonly SendResult[];
  readonly runs: readonly SlotRunSummary[];
  /** The parallel slots started in the background. */
  readonly started: readonly string[];
}

export interface BootstrapOutcome {
  readonly runs: readonly SlotRunSummary[];
  /** Bootstrap slots that had already run in this session. */
  readonly skipped: readonly string[];
}

/**
 * Runs an Agent Core's authored slots (seed 003 SlotRuntime). In each phase the serial slots run one after the
 * other and may change the main flow (input: add model context; output: replace the response, send); then the
 * parallel slots start in the background ({@link BackgroundWorkRuntime}) and cannot change the prompt, the
 * response or the history. Every invocation is its own `slot_run` stream. A serial slot that fails or times out
 * with `failure_policy: hard` fails the turn ({@link SlotFailedError}); `soft` is recorded and skipped, and
 * what the slot staged (context, response) is dropped. Sends are recorded at once and stay recorded.
 *
 * @example
 * ```ts
 * const slots = new SlotRuntime({ store, clock, ids, core: await loadCore('agent'), deliver, background });
 * await slots.runBootstrap({ sessionId });
 * const { context } = await slots.runInput({ sessionId, turnId, rawText: 'hi' });
 * const { responseText } = await slots.runOutput({ sessionId, turnId, responseText: answer });
 * ```
 */
export class SlotRuntime {
  readonly core: AgentCore;
  private readonly modules: SlotModuleLoader;
  private roots: string[] | undefined;
  private readonly env: InvocationEnv;

  constructor(private readonly options: SlotRuntimeOptions) {
    this.core = options.core;
    this.modules = options.modules ?? createSlotModuleLoader();
    this.env = {
      store: options.store,
      clock: options.clock,
      ids: options.ids,
      core: options.core,
      load: (spec) => this.modules.load(spec),
      resolveFile: (slotId, path) => this.resolveFile(slotId, path),
      send: (spec, slotRunId, sessionId, turnId) => (request) =>
        options.deliver({
          sessionId,
          coreId: options.core.id,
          slotId: spec.id,
          slotRunId,
          visibility: spec.historyPolicy,
          ...(turnId ? { turnId } : {}),
          ...(request.kind === 'text'
            ? { text: request.text }
            : {
                text: fileMessageText(request.path, request.caption),
                file: { path: request.path, ...(request.caption === undefined ? {} : { caption: request.caption }) },
              }),
        }),
      log: (entry) => options.onLog?.(entry),
    };
  }

  /**
   * Runs the bootstrap slots a session has not run yet, in order. A slot is done for a session once a run
   * finished or ended `soft`; after a `hard` failure (the turn failed) it runs again at the next call. A slot
   * whose run another host has open (started, not ended, within its timeout) is skipped, not run twice; an
   * open run older than its timeout is a crashed host's, and the slot runs again.
   */
  async runBootstrap(request: PhaseRequest): Promise<BootstrapOutcome> {
    const runs: SlotRunSummary[] = [];
    const skipped: string[] = [];
    for (const id of this.core.pipelines.bootstrap.serial) {
      request.signal?.throwIfAborted();
      const spec = this.spec(id);
      const record = await bootstrapRecord(this.options.store, request.sessionId, id);
      const openElsewhere =
        record.runningSince !== null &&
        this.options.clock.now() - record.runningSince < spec.timeoutSeconds * 1000 + OPEN_RUN_GRACE_MS;
      if (record.done || openElsewhere) {
        skipped.push(id);
        continue;
      }
      const result = await this.invoke(spec, 'serial', request, emptyState, {
        idempotencyKey: `slot.bootstrap:${request.sessionId}/${id}/${record.runs}`,
      });
      if (result.status === 'skipped') skipped.push(id);
      else runs.push(summary(id, result));
    }
    return { runs, skipped };
  }

  /**
   * Imports every slot module the core's pipelines list, before any turn needs one. An import counts against
   * its slot's `timeout_seconds`; done lazily under load (a TypeScript module is compiled on its first ever
   * import, and the answers wait behind a busy event loop), a first import can take longer than a short
   * timeout and every invocation waiting on it times out. A module that fails here is only reported: its
   * invocation imports it again and records the failure as `slot.failed`.
   */
  async preload(): Promise<{ readonly slotId: string; readonly error: unknown }[]> {
    // All at once: a module compiled or read from the cache does not wait for the one before it.
    const outcomes = await Promise.all(
      [...this.core.slots.values()].map((spec) =>
        this.modules.load(spec).then(
          () => undefined,
          (error: unknown) => ({ slotId: spec.id, error }),
        ),
      ),
    );
    return outcomes.filter((o): o is { slotId: string; error: unknown } => o !== undefined);
  }

  /** Runs the input serial slots in order, then starts the input parallel slots in the background. */
  async runInput(request: InputRequest): Promise<InputOutcome> {
    const history = request.history ?? (await this.history(request.sessionId));
    const state: PhaseState = { rawText: request.rawText, history, context: [], responseText: '' };
    const runs: SlotRunSummary[] = [];
    let context: ContextItem[] = [];
    for (const id of this.core.pipelines.input.serial) {
      request.signal?.throwIfAborted();
      const result = await this.invoke(this.spec(id), 'serial', request, { ...state, context });
      runs.push(summary(id, result));
      if (result.status === 'finished') context = [...context, ...result.context];
    }
    const final = Object.freeze({ ...state, context: Object.freeze(context) });
    const started = this.core.pipelines.input.parallel.map((id) => this.startParallel(id, request, final));
    return { context, runs, started };
  }

  /** Runs the output serial slots in order (they may send and replace the response), then the parallel ones. */
  async runOutput(request: OutputRequest): Promise<OutputOutcome> {
    const base: PhaseState = {
      rawText: request.rawText ?? '',
      history: request.history ?? [],
      context: [],
      responseText: request.responseText,
    };
    const runs: SlotRunSummary[] = [];
    const sends: SendResult[] = [];
    let responseText = request.responseText;
    for (const id of this.core.pipelines.output.serial) {
      request.signal?.throwIfAborted();
      const result = await this.invoke(this.spec(id), 'serial', request, { ...base, responseText });
      runs.push(summary(id, result));
      if (result.status === 'finished') {
        responseText = result.responseText ?? responseText;
        sends.push(...result.sends);
      }
    }
    const final = Object.freeze({ ...base, responseText });
    const started = this.core.pipelines.output.parallel.map((id) => this.startParallel(id, request, final));
    return { responseText, sends, runs, started };
  }

  /** Runs one serial invocation; a hard failure or timeout throws {@link SlotFailedError}. */
  private async invoke(
    spec: SlotSpec,
    mode: SlotMode,
    request: PhaseRequest,
    state: PhaseState,
    extra: { idempotencyKey?: string } = {},
  ): Promise<InvocationResult> {
    const result = await invokeSlot(this.env, {
      spec,
      mode,
      sessionId: request.sessionId,
      turnId: request.turnId,
      state,
      signal: request.signal,
      ...extra,
    });
    if ((result.status === 'failed' || result.status === 'timed_out') && result.policy === 'hard') {
      throw new SlotFailedError(spec.id, spec.phase, result.slotRunId, result.status, result.error, {
        cause: result.cause,
      });
    }
    return result;
  }

  private startParallel(id: string, request: PhaseRequest, state: PhaseState): string {
    const spec = this.spec(id);
    const running = invokeSlot(this.env, {
      spec,
      mode: 'parallel',
      sessionId: request.sessionId,
      turnId: request.turnId,
      state,
      signal: request.signal,
    });
    this.options.background.track(`slot:${spec.phase}/${spec.id} session ${request.sessionId}`, running);
    return id;
  }

  private spec(id: string): SlotSpec {
    const spec = this.core.slots.get(id);
    if (!spec) throw new Error(`core ${this.core.id} has no slot ${id}; load the core with loadCore`);
    return spec;
  }

  private async history(sessionId: string): Promise<HistoryEntry[]> {
    if (!this.options.sessions) return [];
    const entries = await this.options.sessions.history(sessionId, { forModel: true });
    return entries.map((e) => ({ role: e.role, text: e.text }));
  }

  private resolveFile(slotId: string, path: string): string {
    const call = 'ctx.output.send_file';
    this.roots ??= [this.options.workspaceRoot ?? this.core.dir, ...(this.options.allowedDirs ?? [])].flatMap((dir) => {
      try {
        return [realpathSync(dir)];
      } catch {
        return []; // an allowed directory that does not exist allows nothing
      }
    });
    const given = resolve(this.roots[0] ?? this.core.dir, path);
    let real: string;
    try {
      real = realpathSync(given);
    } catch {
      throw new SlotRuleError(slotId, call, `"${path}" does not exist (${given})`);
    }
    if (!this.roots.some((root) => isInside(root, real))) throw new SlotPathError(slotId, path, real, this.roots);
    if (!statSync(real).isFile()) throw new SlotRuleError(slotId, call, `"${path}" is not a file`);
    return real;
  }
}

/** How long past its timeout an open bootstrap run still counts as another host's live run. */
const OPEN_RUN_GRACE_MS = 5_000;

const emptyState: PhaseState = Object.freeze({ rawText: '', history: [], context: [], responseText: '' });

function summary(slotId: string, result: InvocationResult): SlotRunSummary {
  return { slotId, slotRunId: result.slotRunId, status: result.status };
}
