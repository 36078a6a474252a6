import type { NewEvent } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { deciderSpecification } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { toolCallDecider, turnDecider } from './turn.decider.js';

const turnId = 'trn_01JD5Y7Q6N0000000000000000';
const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const toolCallId = 'tcl_01JD5Y7Q6N0000000000000000';
const usage = { inputTokens: 3, outputTokens: 5 };

describe('the turn decider (given / when / then)', () => {
  const spec = deciderSpecification(turnDecider, { streamType: 'turn' });
  const started: NewEvent = { type: 'turn.started', data: { turnId, sessionId, runId: 'run_1' } };
  const cancelled: NewEvent = { type: 'turn.cancelled', data: { turnId, sessionId, reason: 'stop' } };

  it('ends a running turn: completed with its answer and usage, failed with its error, cancelled', () => {
    spec
      .given([started])
      .when({ type: 'complete', turnId, sessionId, outputMessageId: 'msg_1', usage })
      .thenAppends([{ type: 'turn.completed', data: { turnId, sessionId, outputMessageId: 'msg_1', usage } }]);
    const error = { code: 'provider_failed', message: 'boom' };
    spec
      .given([started])
      .when({ type: 'fail', turnId, sessionId, error })
      .thenAppends([{ type: 'turn.failed', data: { turnId, sessionId, error } }]);
    spec.given([started]).when({ type: 'cancel', turnId, sessionId, reason: 'stop' }).thenAppends([cancelled]);
  });

  it('cancelling a cancelled turn appends nothing', () => {
    spec.given([started, cancelled]).when({ type: 'cancel', turnId, sessionId, reason: 'again' }).thenNothing();
  });

  it('a turn ends once: a second ending, or an ending before the start, is refused', () => {
    const completed: NewEvent = { type: 'turn.completed', data: { turnId, sessionId, usage } };
    const error = { code: 'x', message: 'late' };
    spec
      .given([started, completed])
      .when({ type: 'fail', turnId, sessionId, error })
      .thenThrows(IllegalTransitionError);
    spec
      .given([started, cancelled])
      .when({ type: 'complete', turnId, sessionId, usage })
      .thenThrows(IllegalTransitionError);
    spec.given([]).when({ type: 'complete', turnId, sessionId, usage }).thenThrows(IllegalTransitionError);
  });
});

describe('the tool-call decider (given / when / then)', () => {
  const spec = deciderSpecification(toolCallDecider, { streamType: 'tool_call' });
  const requested: NewEvent = {
    type: 'tool_call.requested',
    data: { toolCallId, sessionId, turnId, stepId: 's1', tool: 'shell', idempotent: false, arguments: {} },
  };
  const started: NewEvent = { type: 'tool_call.started', data: { toolCallId } };

  it('runs a requested call: started, then its outcome', () => {
    spec.given([requested]).when({ type: 'start', toolCallId }).thenAppends([started]);
    spec
      .given([requested, started])
      .when({ type: 'succeed', toolCallId, output: 'ok' })
      .thenAppends([{ type: 'tool_call.succeeded', data: { toolCallId, output: 'ok' } }]);
    spec
      .given([requested])
      .when({ type: 'deny', toolCallId, policy: 'plan_mode', reason: 'read-only' })
      .thenAppends([{ type: 'tool_call.denied', data: { toolCallId, policy: 'plan_mode', reason: 'read-only' } }]);
  });

  it('the cancel contract: not started is cancelled, started is unknown (never re-run)', () => {
    spec
      .given([requested])
      .when({ type: 'settle_cancel', toolCallId, reason: 'stop' })
      .thenAppends([{ type: 'tool_call.cancelled', data: { toolCallId, reason: 'stop' } }]);
    spec
      .given([requested, started])
      .when({ type: 'settle_cancel', toolCallId, reason: 'stop' })
      .thenAppends([{ type: 'tool_call.unknown', data: { toolCallId, reason: 'stop' } }]);
  });

  it('settling a settled call appends nothing', () => {
    const succeeded: NewEvent = { type: 'tool_call.succeeded', data: { toolCallId, output: 'ok' } };
    spec.given([requested, started, succeeded]).when({ type: 'settle_cancel', toolCallId, reason: 'x' }).thenNothing();
    const cancelled: NewEvent = { type: 'tool_call.cancelled', data: { toolCallId, reason: 'stop' } };
    spec.given([requested, cancelled]).when({ type: 'settle_cancel', toolCallId, reason: 'x' }).thenNothing();
  });

  it('a call runs at most once: starting a denied or finished call, or a second outcome, is refused', () => {
    const denied: NewEvent = { type: 'tool_call.denied', data: { toolCallId, policy: 'p', reason: 'r' } };
    spec.given([requested, denied]).when({ type: 'start', toolCallId }).thenThrows(IllegalTransitionError);
    const succeeded: NewEvent = { type: 'tool_call.succeeded', data: { toolCallId, output: 'ok' } };
    spec
      .given([requested, started, succeeded])
      .when({ type: 'fail', toolCallId, error: { code: 'x', message: 'again' } })
      .thenThrows(IllegalTransitionError);
    spec.given([requested]).when({ type: 'mark_unknown', toolCallId, reason: 'r' }).thenThrows(IllegalTransitionError);
  });
});
