import { findEvent, IdPrefix } from '@demiurge/contracts';
import { type AppendStream, StreamVersionConflictError } from '@demiurge/event-store';
import { turnLifecycle } from '@demiurge/lifecycle';
import { applyRunEvent, initialRun, type RunAggregate, type RunLease } from '@demiurge/sessions';
import { appendedFact, evolveTurn, initialTurn, type TurnRecord } from '../turn-state.js';
import type { EngineDeps, TurnInput } from './options.js';

/** A turn admitted: its run's lease and the run and turn as the admission commit left them. */
export interface Admitted {
  readonly lease: RunLease;
  readonly run: RunAggregate;
  readonly turn: TurnRecord;
}

/** Nothing admitted: the session this input was to open is bound, by another writer, to `sessionId`: join it. */
export interface BoundElsewhere {
  readonly boundTo: string;
}

/** Admission commits retried when another writer moved the session or a notice in between. */
const ADMISSION_ATTEMPTS = 5;

type Consumer = { sessionId: string; via: string };

const noticeText = (notices: readonly { text: string }[]) => notices.map((n) => n.text).join('\n\n');

function takeNotices(deps: EngineDeps, consumer: Consumer) {
  return deps.notices?.takeTaskCompletions(consumer) ?? Promise.resolve({ notices: [], streams: [] });
}

/**
 * Admits an input: the session's own decisions (opened, plan mode switched), the input slots' context, the
 * session's pending task notices (merged as system context, or with `fromNotices` the turn's input), the user
 * message, the run and the turn, in one commit that also acknowledges the notices; re-read and retried on a
 * version conflict. Undefined when `fromNotices` finds none pending (an earlier input took them);
 * {@link BoundElsewhere} when the session to open was bound by another writer first (nothing was appended).
 */
export async function admit(
  deps: EngineDeps,
  input: TurnInput,
  fromNotices: boolean,
): Promise<Admitted | BoundElsewhere | undefined> {
  const { ids, runs, sessions } = deps;
  const turnId = input.turnId ?? ids.next(IdPrefix.turn);
  const open = input.session?.open;
  const preamble = (open && input.session?.preamble) || [];
  const consumer = { sessionId: input.sessionId, via: `turn ${turnId}` };
  let text = input.text;
  if (fromNotices) {
    const peek = await takeNotices(deps, consumer);
    if (peek.notices.length === 0) return undefined;
    text = noticeText(peek.notices);
  }
  const pin = (await deps.hooks?.pin?.({ sessionId: input.sessionId, selection: input.selection ?? null })) ?? null;
  const context =
    (await deps.hooks?.input?.({
      sessionId: input.sessionId,
      turnId,
      text,
      selection: input.selection ?? null,
      opening: open !== undefined,
      ...(open && preamble.length > 0 ? { preamble } : {}),
      pin,
    })) ?? [];
  const { runId, lease, stream: runStream } = runs.startStream(input.sessionId, input.actor, input.runId);
  for (let attempt = 1; ; attempt++) {
    const taken = await takeNotices(deps, consumer);
    if (fromNotices && taken.notices.length === 0) return undefined;
    const inputText = fromNotices ? noticeText(taken.notices) : text;
    const merged = fromNotices
      ? []
      : taken.notices.map((n) => ({ role: 'system' as const, text: n.text, writeHistory: true }));
    const turnContext = [...context, ...merged];
    // Message ids are time-sortable and the transcript lists by id: the preamble, the context, then the input.
    const preambleMessages = preamble.map((m) =>
      sessions.messageEvent({
        sessionId: input.sessionId,
        role: m.role,
        text: m.text,
        messageId: ids.next(IdPrefix.message),
      }),
    );
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
    const { stream: sessionStream, idempotencyKey } = await sessions.admissionStream(
      input.sessionId,
      [
        ...preambleMessages,
        ...contextMessages,
        sessions.messageEvent({ sessionId: input.sessionId, role: 'user', text: inputText, turnId, messageId }),
      ],
      { open, mode: input.session?.mode },
    );
    const turnStream: AppendStream = {
      streamType: turnLifecycle.streamType,
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
            ...(pin ? { core: pin as never } : {}),
            ...(input.workspaceRoot ? { workspace: input.workspaceRoot } : {}),
          },
        },
      ],
    };
    const actor = fromNotices
      ? { kind: 'system' as const, id: 'completion-notices' }
      : (input.actor ?? { kind: 'user' as const, id: input.sessionId });
    try {
      const also = (await input.also?.()) ?? [];
      const result = await deps.store.append([sessionStream, runStream, turnStream, ...taken.streams, ...also], {
        meta: { actor, sessionId: input.sessionId, runId, turnId },
        ...(idempotencyKey ? { idempotencyKey } : {}),
      });
      if (result.replayed) {
        const boundTo = findEvent(result.events, 'session.created')?.data.sessionId;
        if (!boundTo) throw new Error(`admission of turn ${turnId} replayed a commit that opened no session`);
        return { boundTo };
      }
      return {
        lease,
        run: runStream.events.reduce(applyRunEvent, initialRun(runId)),
        turn: turnStream.events.map((e) => appendedFact(deps.store, e)).reduce(evolveTurn, initialTurn(turnId)),
      };
    } catch (err) {
      if (!(err instanceof StreamVersionConflictError) || attempt >= ADMISSION_ATTEMPTS) throw err;
    }
  }
}
