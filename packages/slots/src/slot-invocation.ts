import type { Actor, Clock, EventMeta, IdGenerator, NewEvent } from '@demiurge/contracts';
import { DemiurgeError, findEvent, IdPrefix } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { type SlotEventType, slotLifecycle } from '@demiurge/lifecycle';
import type { AgentCore, FailurePolicy, SlotMode, SlotSpec } from './agent-core.js';
import { type ContextScope, createSlotContext, type PhaseState } from './slot-context.js';
import type { ContextItem, SendResult, SlotFunction } from './slot-sdk.js';

/** The actor of every `slot.*` event. */
export const SLOTS_ACTOR: Actor = { kind: 'system', id: 'slots' };

/** What an invocation needs from its runtime. */
export interface InvocationEnv {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly core: AgentCore;
  load(spec: SlotSpec): Promise<SlotFunction>;
  resolveFile(slotId: string, path: string): string;
  send: (spec: SlotSpec, slotRunId: string, sessionId: string, turnId: string | undefined) => ContextScope['send'];
  log(entry: SlotLogEntry): void;
}

/** A line a slot logged with `ctx.log`, or a late error of an abandoned invocation. */
export interface SlotLogEntry {
  readonly level: 'info' | 'error';
  readonly slotId: string;
  readonly slotRunId: string;
  readonly sessionId: string;
  readonly text: string;
}

export interface InvocationRequest {
  readonly spec: SlotSpec;
  readonly mode: SlotMode;
  readonly sessionId: string;
  readonly turnId: string | undefined;
  readonly state: PhaseState;
  readonly signal: AbortSignal | undefined;
  /** Makes the `slot.started` append idempotent (bootstrap: one run per session and attempt). */
  readonly idempotencyKey?: string;
}

/** How one invocation ended, with what it staged (applied by the caller only when it finished). */
export type InvocationResult =
  | { readonly status: 'skipped'; readonly slotRunId: string }
  | {
      readonly status: 'finished';
      readonly slotRunId: string;
      readonly context: readonly ContextItem[];
      readonly responseText: string | undefined;
      readonly sends: readonly SendResult[];
    }
  | {
      readonly status: 'failed' | 'timed_out';
      readonly slotRunId: string;
      readonly policy: FailurePolicy;
      readonly error: { readonly code: string; readonly message: string };
      readonly cause: unknown;
    };

const SLOT_RUN = slotLifecycle.streamType;
const TIMED_OUT = Symbol('timed out');
const MAX_MESSAGE = 2000;

/**
 * Runs one slot invocation on its own `slot_run` stream: `slot.started`, then `slot.finished`, `slot.failed`
 * or `slot.timed_out`. The module import, the slot function and the sends it started all count against
 * `timeout_seconds`; on timeout `ctx.signal` aborts and the invocation is abandoned (its context closed, a
 * late error only logged). A parallel slot's failure is always `soft`.
 */
export async function invokeSlot(env: InvocationEnv, request: InvocationRequest): Promise<InvocationResult> {
  const { spec, mode, sessionId, turnId } = request;
  const slotRunId = env.ids.next(IdPrefix.slotRun);
  const meta: Partial<EventMeta> = { actor: SLOTS_ACTOR, sessionId, ...(turnId ? { turnId } : {}) };
  const started = await env.store.append(
    runStream(slotRunId, 'no_stream', {
      type: 'slot.started',
      data: {
        slotRunId,
        sessionId,
        coreId: env.core.id,
        slotId: spec.id,
        phase: spec.phase,
        mode,
        ...(turnId ? { turnId } : {}),
      },
    }),
    { meta, ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}) },
  );
  if (started.replayed) {
    return { status: 'skipped', slotRunId: findEvent(started.events, 'slot.started')?.data.slotRunId ?? slotRunId };
  }

  const begun = env.clock.now();
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(request.signal?.reason);
  if (request.signal?.aborted) onAbort();
  request.signal?.addEventListener('abort', onAbort, { once: true });
  const handle = createSlotContext({
    spec,
    mode,
    slotRunId,
    sessionId,
    turnId,
    core: env.core,
    state: request.state,
    signal: ctrl.signal,
    resolveFile: (path) => env.resolveFile(spec.id, path),
    send: env.send(spec, slotRunId, sessionId, turnId),
    log: (text) => env.log({ level: 'info', slotId: spec.id, slotRunId, sessionId, text }),
  });
  const work = (async () => {
    const fn = await env.load(spec);
    await fn(handle.ctx);
    handle.assertNoViolation();
    return handle.settle();
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), spec.timeoutSeconds * 1000);
  });
  let outcome: readonly SendResult[] | typeof TIMED_OUT | { error: unknown };
  try {
    outcome = await Promise.race([work, timeout]);
  } catch (error) {
    outcome = { error };
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', onAbort);
  }
  // Abort before closing, so the slot's abort listeners still see an open context.
  if (outcome === TIMED_OUT) ctrl.abort(new DOMException(`slot ${spec.id} timed out`, 'TimeoutError'));
  handle.close();

  const policy: FailurePolicy = mode === 'parallel' ? 'soft' : spec.failurePolicy;
  const end = (event: NewEvent<SlotEventType>) => env.store.append(runStream(slotRunId, 1, event), { meta });
  if (outcome === TIMED_OUT) {
    work.catch((late: unknown) =>
      env.log({
        level: 'error',
        slotId: spec.id,
        slotRunId,
        sessionId,
        text: `after its timeout: ${errorData(late).message}`,
      }),
    );
    await end({ type: 'slot.timed_out', data: { slotRunId, timeoutSeconds: spec.timeoutSeconds, policy } });
    const error = { code: 'slot_timed_out', message: `${spec.id} ran past its timeout of ${spec.timeoutSeconds}s` };
    return { status: 'timed_out', slotRunId, policy, error, cause: undefined };
  }
  if ('error' in outcome) {
    const error = errorData(outcome.error);
    await end({ type: 'slot.failed', data: { slotRunId, error, policy } });
    return { status: 'failed', slotRunId, policy, error, cause: outcome.error };
  }
  await end({ type: 'slot.finished', data: { slotRunId, durationMs: Math.max(0, env.clock.now() - begun) } });
  return {
    status: 'finished',
    slotRunId,
    context: [...handle.addedContext],
    responseText: handle.responseText,
    sends: outcome,
  };
}

function runStream(slotRunId: string, expectedVersion: 'no_stream' | number, event: NewEvent<SlotEventType>) {
  return { streamType: SLOT_RUN, streamId: slotRunId, expectedVersion, events: [event] };
}

/** `{ code, message }` of whatever a slot raised, for `slot.failed`. */
export function errorData(error: unknown): { code: string; message: string } {
  const code =
    error instanceof DemiurgeError
      ? error.code
      : typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.length > 0
        ? (error as { code: string }).code
        : 'slot_error';
  const raw = error instanceof Error ? error.message || error.name : String(error);
  const message = (raw || 'the slot raised without a message').slice(0, MAX_MESSAGE);
  return { code, message };
}
