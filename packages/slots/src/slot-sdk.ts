import type { MessageVisibility, SlotPhase } from '@demiurge/contracts';
import type { SlotMode } from './agent-core.js';

/** The role of a piece of model context an input slot adds. */
export type ContextRole = 'user' | 'system';

/** Options of `ctx.input.add_context`. */
export interface AddContextOptions {
  /** Default `user`. */
  readonly role?: ContextRole;
  /** Also keep the text in the session history (with the slot's `history_policy`). Default false. */
  readonly write_history?: boolean;
}

/** A piece of model context, as slots added it. */
export interface ContextItem {
  readonly role: ContextRole;
  readonly text: string;
  /** The host records it in the session history (with `visibility`) when true. */
  readonly writeHistory: boolean;
  /** The adding slot's history policy. */
  readonly visibility: MessageVisibility;
  readonly slotId: string;
}

/** One entry of the session history the host gives input slots (model-visible messages, in order). */
export interface HistoryEntry {
  readonly role: string;
  readonly text: string;
}

/** What a send recorded: the message and its delivery intent. */
export interface SendResult {
  readonly messageId: string;
  /**
   * The delivery intent recorded with the message; null when the session has no delivery route (e.g. a
   * scheduled fire without `delivery`): the message is recorded in the session only and sent nowhere.
   */
  readonly deliveryId: string | null;
}

/** `ctx.input`: the user's input and the context being built. */
export interface SlotInput {
  /** The user's text as it arrived; read-only (assigning throws). Empty in bootstrap slots. */
  readonly raw_text: string;
  /** The session's model-visible history before this input (per history policy). */
  readonly history: readonly HistoryEntry[];
  /** The context added so far in this phase (earlier serial slots first). */
  readonly context: readonly ContextItem[];
  /** Adds model context. Serial input slots only. */
  add_context(text: string, options?: AddContextOptions): void;
}

/** `ctx.output`: the assistant response and the sends. */
export interface SlotOutput {
  /** The assistant's response text (as changed by earlier serial slots). Empty outside output slots. */
  readonly response_text: string;
  /** Replaces the response text for later slots and the host. Serial output slots only. */
  set_response_text(text: string): void;
  /** Records a message and its delivery intent at once. Output and bootstrap slots. */
  send_text(text: string): Promise<SendResult>;
  /** Records a file message and its delivery intent; the path must be inside the workspace or an allowed dir. */
  send_file(path: string, options?: { readonly caption?: string }): Promise<SendResult>;
}

/**
 * What a slot function gets. The rules of its lane are enforced at run time: a parallel slot cannot change the
 * prompt, the response or the history (`add_context`, `set_response_text` and history-writing sends throw
 * `SlotRuleError`), and every call but `log` throws once the invocation has ended (returned, failed or timed out).
 */
export interface SlotContext {
  readonly slot: {
    readonly id: string;
    readonly phase: SlotPhase;
    readonly mode: SlotMode;
    readonly run_id: string;
    readonly capabilities: readonly string[];
  };
  readonly session: { readonly id: string; readonly core_id: string };
  /** The turn, in input and output slots (and in bootstrap when the host gives one). */
  readonly turn_id: string | undefined;
  readonly core: { readonly id: string; readonly name: string; readonly instructions: string; readonly dir: string };
  readonly input: SlotInput;
  readonly output: SlotOutput;
  /** Aborted when the slot times out or the caller (the turn) is cancelled. */
  readonly signal: AbortSignal;
  /** A line for the host's log (not the session history). The one call still allowed after the run ended. */
  log(text: string): void;
}

/** A slot: an async function of its context. */
export type SlotFunction = (ctx: SlotContext) => void | Promise<void>;

/** What a slot module exports: a default function, or a named `run`. */
export interface SlotModule {
  readonly default?: SlotFunction;
  readonly run?: SlotFunction;
}

/**
 * Types a slot function (it returns it unchanged). Slot modules that cannot resolve `@demiurge/slots` at run
 * time use `import type { SlotContext }` and a plain function instead.
 *
 * @example
 * ```ts
 * export default defineSlot(async (ctx) => {
 *   ctx.input.add_context(ctx.core.instructions, { role: 'system' });
 * });
 * ```
 */
export function defineSlot(fn: SlotFunction): SlotFunction {
  return fn;
}
