import type { AgentCore, SlotMode, SlotSpec } from './agent-core.js';
import { SlotRuleError } from './errors.js';
import type {
  AddContextOptions,
  ContextItem,
  HistoryEntry,
  SendResult,
  SlotContext,
  SlotInput,
  SlotOutput,
} from './slot-sdk.js';

/** What one invocation sees of its phase: the input, the history, the context so far, the response. */
export interface PhaseState {
  readonly rawText: string;
  readonly history: readonly HistoryEntry[];
  readonly context: readonly ContextItem[];
  readonly responseText: string;
}

/** A send the runtime records: a text, or a file (already resolved to its real path) with a caption. */
export type SendRequest =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'file'; readonly path: string; readonly caption: string | undefined };

export interface ContextScope {
  readonly spec: SlotSpec;
  readonly mode: SlotMode;
  readonly slotRunId: string;
  readonly sessionId: string;
  readonly turnId: string | undefined;
  readonly core: AgentCore;
  readonly state: PhaseState;
  readonly signal: AbortSignal;
  /** Resolves a `send_file` path to its real path, throwing synchronously when it is not allowed. */
  resolveFile(path: string): string;
  /** Records a send (the injected `deliver`). */
  send(request: SendRequest): Promise<SendResult>;
  log(text: string): void;
}

/** A slot context with what the invocation staged; the runtime applies the staging only if the slot finished. */
export interface ContextHandle {
  readonly ctx: SlotContext;
  /** Context the slot added, in order. */
  readonly addedContext: readonly ContextItem[];
  /** The response text the slot set, if it did. */
  readonly responseText: string | undefined;
  /** Waits for every send the slot started; the first one that failed to record is thrown. */
  settle(): Promise<readonly SendResult[]>;
  /** Throws the first rule the slot broke, even one the slot caught. */
  assertNoViolation(): void;
  /** Ends the invocation: every later call except `ctx.log` throws {@link SlotRuleError}. */
  close(): void;
}

/**
 * Builds the `ctx` of one slot invocation and enforces the rules of its lane and phase: only serial input
 * slots add context, only serial output slots set the response, input slots do not send, a parallel slot
 * sends only when its `history_policy` is `transient` (its messages then stay out of the history).
 */
export function createSlotContext(scope: ContextScope): ContextHandle {
  const { spec, mode, state } = scope;
  const added: ContextItem[] = [];
  const pending: Promise<SendResult>[] = [];
  let responseText: string | undefined;
  let closed = false;
  let violation: SlotRuleError | undefined;

  const refuse = (call: string, reason: string): never => {
    const error = new SlotRuleError(spec.id, call, reason);
    violation ??= error;
    throw error;
  };
  const check = (call: string, rule: string | undefined) => {
    if (closed) refuse(call, 'the slot run has ended (it returned, failed or timed out)');
    if (rule) refuse(call, rule);
  };
  const text = (call: string, value: unknown): string =>
    typeof value === 'string' ? value : refuse(call, `the text must be a string, not ${typeof value}`);
  const sendRule = (): string | undefined => {
    if (spec.phase === 'input') return 'input slots build the model context; send from an output slot';
    if (mode === 'parallel' && spec.historyPolicy !== 'transient') {
      return (
        `a parallel slot cannot write the session history, and its sends are ${spec.historyPolicy} messages; ` +
        'set history_policy: transient in its slot.yaml to send from a parallel slot'
      );
    }
    return undefined;
  };
  const startSend = (request: SendRequest): Promise<SendResult> => {
    const sent = scope.send(request);
    pending.push(sent);
    // Not lost: settle() awaits every send and fails the run with the first error.
    sent.catch(() => undefined);
    return sent;
  };

  const input: SlotInput = {
    get raw_text() {
      return state.rawText;
    },
    set raw_text(_value: string) {
      refuse('ctx.input.raw_text =', 'raw_text is read-only; add context with ctx.input.add_context');
    },
    history: Object.freeze(state.history.map((entry) => Object.freeze({ role: entry.role, text: entry.text }))),
    get context() {
      return Object.freeze([...state.context, ...added]);
    },
    add_context(value: string, options: AddContextOptions = {}) {
      const call = 'ctx.input.add_context';
      check(call, contextRule(spec.phase, mode, 'change the prompt', 'add model context', 'input'));
      const role = options.role ?? 'user';
      if (role !== 'user' && role !== 'system') refuse(call, `role must be "user" or "system", not ${String(role)}`);
      added.push(
        Object.freeze({
          role,
          text: text(call, value),
          writeHistory: options.write_history === true,
          visibility: spec.historyPolicy,
          slotId: spec.id,
        }),
      );
    },
  };
  const output: SlotOutput = {
    get response_text() {
      return responseText ?? state.responseText;
    },
    set response_text(_value: string) {
      refuse('ctx.output.response_text =', 'use ctx.output.set_response_text(text) in a serial output slot');
    },
    set_response_text(value: string) {
      const call = 'ctx.output.set_response_text';
      check(call, contextRule(spec.phase, mode, 'change the assistant response', 'set the response', 'output'));
      responseText = text(call, value);
    },
    send_text(value: string) {
      const call = 'ctx.output.send_text';
      check(call, sendRule());
      return startSend({ kind: 'text', text: text(call, value) });
    },
    send_file(path: string, options: { readonly caption?: string } = {}) {
      const call = 'ctx.output.send_file';
      check(call, sendRule());
      const real = scope.resolveFile(text(call, path));
      const caption = options.caption === undefined ? undefined : text(call, options.caption);
      return startSend({ kind: 'file', path: real, caption });
    },
  };
  const ctx: SlotContext = Object.freeze({
    slot: Object.freeze({
      id: spec.id,
      phase: spec.phase,
      mode,
      run_id: scope.slotRunId,
      capabilities: Object.freeze([...spec.capabilities]),
    }),
    session: Object.freeze({ id: scope.sessionId, core_id: scope.core.id }),
    turn_id: scope.turnId,
    core: Object.freeze({
      id: scope.core.id,
      name: scope.core.name,
      instructions: scope.core.instructions,
      dir: scope.core.dir,
    }),
    input: Object.freeze(input),
    output: Object.freeze(output),
    signal: scope.signal,
    log(value: string) {
      // Never refused: an abandoned slot's late lines are marked, not thrown into its timers.
      scope.log(closed ? `${String(value)} (after the run ended)` : String(value));
    },
  });

  return {
    ctx,
    addedContext: added,
    get responseText() {
      return responseText;
    },
    async settle() {
      const results = await Promise.allSettled(pending);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return results.map((r) => (r as PromiseFulfilledResult<SendResult>).value);
    },
    assertNoViolation() {
      if (violation) throw violation;
    },
    close() {
      closed = true;
    },
  };
}

/** The rule for a main-flow change (context or response): serial slots of `phase` only. */
function contextRule(
  slotPhase: string,
  mode: SlotMode,
  change: string,
  what: string,
  phase: 'input' | 'output',
): string | undefined {
  if (mode === 'parallel') return `a parallel slot cannot ${change}; run it as a serial ${phase} slot`;
  if (slotPhase !== phase) return `only ${phase} slots ${what}; this is a ${slotPhase} slot`;
  return undefined;
}
