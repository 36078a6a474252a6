import type { NewEvent } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { deciderSpecification } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { approvalDecider } from './approval.decider.js';

const approvalId = 'apr_01JD5Y7Q6N0000000000000000';
const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const toolCallId = 'tcl_01JD5Y7Q6N0000000000000000';
const spec = deciderSpecification(approvalDecider, { streamType: 'approval' });
const requested: NewEvent = {
  type: 'approval.requested',
  data: {
    approvalId,
    sessionId,
    action: 'tool write_file',
    reason: 'plan mode',
    tool: 'write_file',
    arguments: { content: 'x', path: 'a.txt' },
  },
};
const granted: NewEvent = { type: 'approval.granted', data: { approvalId } };

describe('the approval decider (given / when / then)', () => {
  it('requests with the normalized arguments, grants, is consumed by the call it allowed', () => {
    spec
      .given([])
      .when({
        type: 'request',
        approvalId,
        spec: { sessionId, tool: 'write_file', arguments: { path: 'a.txt', content: 'x' }, reason: 'plan mode' },
      })
      .thenAppends([requested]);
    spec
      .given([requested])
      .when({ type: 'grant', approvalId, note: 'ok' })
      .thenAppends([{ type: 'approval.granted', data: { approvalId, note: 'ok' } }]);
    spec
      .given([requested, granted])
      .when({ type: 'consume', approvalId, toolCallId })
      .thenAppends([{ type: 'approval.consumed', data: { approvalId, toolCallId } }]);
  });

  it('an operator approval ahead of the call is requested and granted in one decision', () => {
    spec
      .given([])
      .when({
        type: 'request',
        approvalId,
        spec: { sessionId, tool: 'write_file', arguments: { path: 'a.txt', content: 'x' }, reason: 'plan mode' },
        grant: {},
      })
      .thenAppends([requested, granted]);
  });

  it('expiring an approval no longer open appends nothing; an open one expires', () => {
    spec
      .given([requested])
      .when({ type: 'expire', approvalId })
      .thenAppends([{ type: 'approval.expired', data: { approvalId } }]);
    const consumed: NewEvent = { type: 'approval.consumed', data: { approvalId, toolCallId } };
    spec.given([requested, granted, consumed]).when({ type: 'expire', approvalId }).thenNothing();
    spec
      .given([requested, { type: 'approval.denied', data: { approvalId } }])
      .when({ type: 'expire', approvalId })
      .thenNothing();
  });

  it('a grant is used at most once: granting a denied approval or consuming twice is refused', () => {
    const denied: NewEvent = { type: 'approval.denied', data: { approvalId } };
    spec.given([requested, denied]).when({ type: 'grant', approvalId }).thenThrows(IllegalTransitionError);
    const consumed: NewEvent = { type: 'approval.consumed', data: { approvalId, toolCallId } };
    spec
      .given([requested, granted, consumed])
      .when({ type: 'consume', approvalId, toolCallId })
      .thenThrows(IllegalTransitionError);
    spec.given([requested]).when({ type: 'consume', approvalId, toolCallId }).thenThrows(IllegalTransitionError);
  });
});
