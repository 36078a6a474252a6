import { asDomainEvent, type NewEvent, type RecordedEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { recordGiven } from '../testing/index.js';
import { approvalFold, evolveApproval } from './approval.fold.js';
import { evolveSession, sessionFold } from './session.fold.js';
import { evolveToolCall, toolCallFold } from './tool-call.fold.js';
import { evolveTurn, turnFold } from './turn.fold.js';

const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const turnId = 'trn_01JD5Y7Q6N0000000000000000';
const toolCallId = 'tcl_01JD5Y7Q6N0000000000000000';
const approvalId = 'apr_01JD5Y7Q6N0000000000000000';

interface Folds<S> {
  strict: { initialState: S; evolve(state: S, event: RecordedEvent, streamId?: string): S };
  tolerant(state: S, event: RecordedEvent): S | undefined;
}

/** given (events) → the state, through the strict fold and the tolerant one alike (they must agree). */
function given<S>(folds: Folds<S>, streamType: string, streamId: string, ...events: NewEvent[]): S {
  const recorded = recordGiven(events, streamType, streamId);
  const strict = recorded.reduce((s, e) => folds.strict.evolve(s, e, streamId), folds.strict.initialState);
  const tolerant = recorded.reduce<S>((s, e) => folds.tolerant(s, e) ?? s, folds.strict.initialState);
  expect(tolerant).toEqual(strict);
  return strict;
}

/** A refused event: the strict fold throws naming the stream, the tolerant one skips it. */
function refuses<S>(folds: Folds<S>, state: S, event: NewEvent, streamType: string, streamId: string): void {
  const [recorded] = recordGiven([event], streamType, streamId);
  expect(() => folds.strict.evolve(state, recorded!, streamId)).toThrow(IllegalTransitionError);
  expect(folds.tolerant(state, recorded!)).toBeUndefined();
}

const session: Folds<ReturnType<typeof sessionFold.evolve>> = { strict: sessionFold, tolerant: evolveSession };
const turn: Folds<ReturnType<typeof turnFold.evolve>> = {
  strict: { ...turnFold, evolve: (s, e, id) => turnFold.evolve(s, asDomainEvent(e), id) },
  tolerant: (s, e) => evolveTurn(s, asDomainEvent(e)),
};
const toolCall: Folds<ReturnType<typeof toolCallFold.evolve>> = {
  strict: { ...toolCallFold, evolve: (s, e, id) => toolCallFold.evolve(s, asDomainEvent(e), id) },
  tolerant: (s, e) => evolveToolCall(s, asDomainEvent(e)),
};
const approval: Folds<ReturnType<typeof approvalFold.evolve>> = { strict: approvalFold, tolerant: evolveApproval };

describe('the session fold', () => {
  const created: NewEvent = {
    type: 'session.created',
    data: {
      sessionId,
      title: 't',
      coreId: 'default',
      binding: { coreId: 'default', channel: 'cli', conversationKey: 'k' },
    },
  };
  it('follows a session: opened, renamed, plan mode, busy mode, archived; the stream version', () => {
    expect(
      given(
        session,
        'session',
        sessionId,
        created,
        { type: 'session.updated', data: { sessionId, title: 'renamed' } },
        { type: 'session.mode_changed', data: { sessionId, mode: 'plan', previous: 'default' } },
        {
          type: 'message.recorded',
          data: { messageId: 'msg_1', sessionId, role: 'user', text: 'x', visibility: 'persist' },
        },
        { type: 'session.busy_mode_changed', data: { sessionId, busyMode: 'interrupt' } },
        { type: 'session.archived', data: { sessionId, reason: 'done' } },
      ),
    ).toEqual({
      status: 'archived',
      sessionId,
      title: 'renamed',
      coreId: 'default',
      binding: { coreId: 'default', channel: 'cli', conversationKey: 'k' },
      parent: null,
      mode: 'plan',
      busyMode: 'interrupt',
      archivedReason: 'done',
      version: 6,
    });
  });
  it('refuses a message to an archived session and a second opening', () => {
    const archived = given(session, 'session', sessionId, created, {
      type: 'session.archived',
      data: { sessionId, reason: 'done' },
    });
    const message: NewEvent = {
      type: 'message.recorded',
      data: { messageId: 'msg_1', sessionId, role: 'user', text: 'x', visibility: 'persist' },
    };
    refuses(session, archived, message, 'session', sessionId);
    refuses(session, given(session, 'session', sessionId, created), created, 'session', sessionId);
  });
});

describe('the turn fold', () => {
  const started: NewEvent = {
    type: 'turn.started',
    data: { turnId, sessionId, runId: 'run_1', inputMessageId: 'msg_1' },
  };
  const round: NewEvent = {
    type: 'turn.model_responded',
    data: {
      turnId,
      runId: 'run_1',
      stepId: 's1',
      provider: 'fake',
      model: 'fake',
      content: 'calling',
      toolCalls: [{ callId: 'c1', toolCallId, name: 'shell', arguments: { command: 'ls' } }],
      usage: { inputTokens: 1, outputTokens: 2 },
    },
  };
  it('follows a turn: started, its model rounds with their calls, its ending', () => {
    const failed = given(turn, 'turn', turnId, started, round, {
      type: 'turn.failed',
      data: { turnId, sessionId, error: { code: 'x', message: 'boom' } },
    });
    expect(failed).toMatchObject({
      status: 'failed',
      turnId,
      sessionId,
      runId: 'run_1',
      inputMessageId: 'msg_1',
      error: { code: 'x', message: 'boom' },
      steps: [
        {
          stepId: 's1',
          content: 'calling',
          calls: [{ callId: 'c1', toolCallId, name: 'shell', arguments: { command: 'ls' }, argumentsError: null }],
        },
      ],
    });
  });
  it('a turn ends once', () => {
    const done = given(turn, 'turn', turnId, started, { type: 'turn.completed', data: { turnId, sessionId } });
    refuses(turn, done, { type: 'turn.cancelled', data: { turnId, sessionId, reason: 'late' } }, 'turn', turnId);
  });
});

describe('the tool-call fold', () => {
  const requested: NewEvent = {
    type: 'tool_call.requested',
    data: { toolCallId, sessionId, turnId, stepId: 's1', tool: 'shell', idempotent: false, effect: 'shell' },
  };
  it('follows a call: requested, started, unknown, resolved (the guard picks the target)', () => {
    const resolved = given(
      toolCall,
      'tool_call',
      toolCallId,
      requested,
      { type: 'tool_call.started', data: { toolCallId } },
      { type: 'tool_call.unknown', data: { toolCallId, reason: 'host died' } },
      { type: 'tool_call.resolved', data: { toolCallId, decision: 'failed' } },
    );
    expect(resolved).toMatchObject({
      status: 'failed',
      tool: 'shell',
      effect: 'shell',
      idempotent: false,
      arguments: null,
      reason: 'host died',
      resolution: 'failed',
    });
  });
  it('a started call is never started again', () => {
    const started = given(toolCall, 'tool_call', toolCallId, requested, {
      type: 'tool_call.started',
      data: { toolCallId },
    });
    refuses(toolCall, started, { type: 'tool_call.started', data: { toolCallId } }, 'tool_call', toolCallId);
  });
});

describe('the approval fold', () => {
  const requested: NewEvent = {
    type: 'approval.requested',
    data: { approvalId, sessionId, action: 'tool shell', reason: 'plan', expiresAt: '2026-01-01T00:15:00Z' },
  };
  it('follows an approval: who asked, who answered, the call that used it; one time form', () => {
    const consumed = given(
      approval,
      'approval',
      approvalId,
      requested,
      { type: 'approval.granted', data: { approvalId, note: 'ok' } },
      { type: 'approval.consumed', data: { approvalId, toolCallId } },
    );
    expect(consumed).toMatchObject({
      status: 'consumed',
      expiresAt: '2026-01-01T00:15:00.000Z',
      requestedBy: { kind: 'system', id: 'test' },
      decidedBy: { kind: 'system', id: 'test' },
      note: 'ok',
      consumedBy: toolCallId,
    });
  });
  it('a grant is consumed at most once', () => {
    const consumed = given(
      approval,
      'approval',
      approvalId,
      requested,
      { type: 'approval.granted', data: { approvalId } },
      { type: 'approval.consumed', data: { approvalId, toolCallId } },
    );
    refuses(
      approval,
      consumed,
      { type: 'approval.consumed', data: { approvalId, toolCallId } },
      'approval',
      approvalId,
    );
  });
});
