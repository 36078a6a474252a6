import { approvalLifecycle, finalStates } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';
import { agent, ann, setup, T0, T1 } from '../test/setup.js';
import {
  type ApprovalEntry,
  type ApprovalView,
  OPEN_APPROVAL_STATUSES,
  RunsCollections,
  sessionPrefix,
} from './index.js';

describe('runs projector: approvals', () => {
  it('keeps an approval open until it is consumed, with who asked and who decided', async () => {
    const { ids, clock, reader, sessionId, append, approve } = setup();
    const toolCallId = ids.next('tcl');
    const runId = ids.next('run');
    const approvalId = await approve({
      toolCallId,
      runId,
      tool: 'fs.write',
      arguments: { path: 'a.txt', text: 'hi' },
      expiresAt: '2026-01-01T00:05:00Z',
    });
    const entry: ApprovalEntry = {
      approvalId,
      status: 'requested',
      tool: 'fs.write',
      expiresAt: '2026-01-01T00:05:00.000Z',
    };
    expect(await reader.list<ApprovalEntry>(RunsCollections.openApprovals)).toEqual([entry]);

    clock.advance(1000);
    await append('approval', approvalId, {
      type: 'approval.granted',
      data: { approvalId, note: 'just this once' },
      meta: { actor: ann },
    });
    expect(await reader.get<ApprovalEntry>(RunsCollections.openApprovals, approvalId)).toEqual({
      ...entry,
      status: 'granted',
    });

    await append('approval', approvalId, { type: 'approval.consumed', data: { approvalId, toolCallId } });
    expect(await reader.get<ApprovalView>(RunsCollections.approvals, approvalId)).toEqual({
      approvalId,
      sessionId,
      runId,
      toolCallId,
      tool: 'fs.write',
      arguments: { path: 'a.txt', text: 'hi' },
      action: 'write a file',
      reason: 'plan mode',
      status: 'consumed',
      expiresAt: '2026-01-01T00:05:00.000Z',
      requestedBy: agent,
      decidedBy: ann,
      note: 'just this once',
      consumedBy: toolCallId,
      createdAt: T0,
      updatedAt: T1,
    });
    expect(await reader.list(RunsCollections.openApprovals)).toEqual([]);
    expect(
      await reader.list<ApprovalEntry>(RunsCollections.approvalsBySession, { prefix: sessionPrefix(sessionId) }),
    ).toEqual([{ ...entry, status: 'consumed' }]);

    // A consumed grant cannot be used again: the machine refuses, nothing reopens.
    const before = await reader.dump();
    await append('approval', approvalId, { type: 'approval.granted', data: { approvalId }, meta: { actor: ann } });
    expect(await reader.dump()).toEqual(before);
  });

  it('closes expired and denied approvals but keeps them in the session history', async () => {
    const { reader, sessionId, append, approve } = setup();
    const unanswered = await approve();
    const unused = await approve({ tool: 'shell' });
    const refused = await approve();
    const waiting = await approve();
    await append('approval', unanswered, { type: 'approval.expired', data: { approvalId: unanswered } });
    await append(
      'approval',
      unused,
      { type: 'approval.granted', data: { approvalId: unused }, meta: { actor: ann } },
      { type: 'approval.expired', data: { approvalId: unused } },
    );
    await append('approval', refused, {
      type: 'approval.denied',
      data: { approvalId: refused, note: 'no' },
      meta: { actor: ann },
    });
    expect(await reader.list<ApprovalEntry>(RunsCollections.openApprovals)).toEqual([
      { approvalId: waiting, status: 'requested', tool: null, expiresAt: null },
    ]);
    const history = await reader.list<ApprovalEntry>(RunsCollections.approvalsBySession, {
      prefix: sessionPrefix(sessionId),
    });
    expect(history.map((e) => [e.approvalId, e.status])).toEqual([
      [unanswered, 'expired'],
      [unused, 'expired'],
      [refused, 'denied'],
      [waiting, 'requested'],
    ]);
    expect(await reader.get<ApprovalView>(RunsCollections.approvals, unused)).toMatchObject({
      status: 'expired',
      decidedBy: ann,
      consumedBy: null,
    });
    expect(await reader.get<ApprovalView>(RunsCollections.approvals, refused)).toMatchObject({
      status: 'denied',
      decidedBy: ann,
      note: 'no',
    });
  });

  it('ignores events of approvals never requested', async () => {
    const { ids, reader, append } = setup();
    const ghost = ids.next('apr');
    await append('approval', ghost, { type: 'approval.granted', data: { approvalId: ghost }, meta: { actor: ann } });
    expect(await reader.dump()).toEqual({});
  });

  it('counts as open exactly the statuses the approval machine can still leave', () => {
    const open = approvalLifecycle.states.filter((s) => s !== 'none' && !finalStates(approvalLifecycle).includes(s));
    expect([...OPEN_APPROVAL_STATUSES].sort()).toEqual(open.sort());
  });
});
