import type { SlotPhase } from '@demiurge/contracts';
import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/** A YAML path: the keys and list indexes from the document root, e.g. `['input', 'serial', 1]`. */
export type YamlPath = readonly (string | number)[];

/**
 * An Agent Core that cannot be loaded: bad YAML, an unknown key or phase, an unknown, duplicate or badly named
 * slot id, a missing `slot.yaml` or module, a module outside the core. `file` is the file (or folder) at
 * fault, `line` the 1-based line in it where the YAML has one, `path` the YAML path. The message starts with
 * `file:line:` so a person can jump to it.
 *
 * @example
 * ```ts
 * try { await loadCore('agent'); }
 * catch (e) { if (e instanceof CoreLoadError) console.error(e.message); } // ".../pipelines.yaml:4: unknown slot id ..."
 * ```
 */
export class CoreLoadError extends DemiurgeError {
  override readonly name = 'CoreLoadError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly file: string,
    readonly detail: string,
    readonly line: number | undefined = undefined,
    readonly path: YamlPath = [],
    options?: { cause?: unknown },
  ) {
    super(`${line === undefined ? file : `${file}:${line}`}: ${detail}`, options);
  }
}

/**
 * A slot broke a rule of its lane or phase: a parallel slot changing the prompt, the response or the history,
 * an input slot sending, a write to `ctx.input.raw_text`, any call after its invocation ended. The slot run
 * is recorded as `slot.failed`.
 *
 * @example
 * ```ts
 * ctx.input.add_context('x'); // in a parallel slot: throws SlotRuleError
 * ```
 */
export class SlotRuleError extends DemiurgeError {
  override readonly name = 'SlotRuleError';
  readonly code = ErrorCode.PolicyDenied;
  constructor(
    readonly slotId: string,
    /** The call that was refused, e.g. `ctx.input.add_context`. */
    readonly call: string,
    readonly reason: string,
  ) {
    super(`slot ${slotId}: ${call} is not allowed: ${reason}`);
  }
}

/**
 * `ctx.output.send_file` was given a path whose real location (symlinks followed) is outside the workspace
 * and the allowed directories. Nothing was recorded.
 */
export class SlotPathError extends DemiurgeError {
  override readonly name = 'SlotPathError';
  readonly code = ErrorCode.WorkspaceEscape;
  constructor(
    readonly slotId: string,
    readonly path: string,
    readonly resolved: string,
    readonly allowed: readonly string[],
  ) {
    super(`slot ${slotId}: file "${path}" (${resolved}) is outside the allowed directories: ${allowed.join(', ')}`);
  }
}

/** How a slot invocation that ends a turn ended. */
export type SlotFailureOutcome = 'failed' | 'timed_out';

/**
 * A serial slot with `failure_policy: hard` failed or timed out: the turn fails. Thrown by `SlotRuntime`
 * after `slot.failed` / `slot.timed_out` is recorded; `cause` is what the slot raised.
 *
 * Its `code` is `slot_failed`, which `@demiurge/contracts` `ErrorCode` does not list yet, so it extends
 * `Error` rather than `DemiurgeError`; `toJSON` gives the same `{ code, message }` shape.
 */
export class SlotFailedError extends Error {
  override readonly name = 'SlotFailedError';
  readonly code = 'slot_failed' as const;
  constructor(
    readonly slotId: string,
    readonly phase: SlotPhase,
    readonly slotRunId: string,
    readonly outcome: SlotFailureOutcome,
    /** The recorded error (`slot.failed`) or the timeout (`slot.timed_out`). */
    readonly error: { readonly code: string; readonly message: string },
    options?: { cause?: unknown },
  ) {
    super(
      `${phase} slot ${slotId} ${outcome === 'timed_out' ? 'timed out' : 'failed'} (hard): ${error.message}`,
      options,
    );
  }

  toJSON(): { code: 'slot_failed'; message: string } {
    return { code: this.code, message: this.message };
  }
}
