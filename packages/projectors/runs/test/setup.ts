import type { NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { createInMemoryEventStore } from '@demiurge/event-store';
import { runsProjector } from '../src/index.js';

/** The fake clock's start, and one second later. */
export const T0 = '2026-01-01T00:00:00.000Z';
export const T1 = '2026-01-01T00:00:01.000Z';
export const ann = { kind: 'user', id: 'ann' } as const;
export const agent = { kind: 'agent', id: 'main' } as const;

/**
 * An in-memory store with only the runs projector, on a fake clock, and helpers that append to a
 * stream and create a run, a tool call or an approval in one session.
 */
export function setup() {
  const clock = createFakeClock();
  const ids = createSeededIdGenerator(clock, 7);
  const store = createInMemoryEventStore({ projectors: [runsProjector], clock, ids });
  const reader = store.projection('runs');
  const sessionId = ids.next('ses');
  const append = (streamType: string, streamId: string, ...events: NewEvent[]) =>
    store.append({ streamType, streamId, expectedVersion: 'any', events });
  const run = (runId: string, ...events: NewEvent[]) => append('run', runId, ...events);
  const queue = async () => {
    const runId = ids.next('run');
    await run(runId, { type: 'run.queued', data: { runId, sessionId } });
    return runId;
  };
  const request = async (turnId: string, stepId: string, extra: Record<string, unknown> = {}) => {
    const toolCallId = ids.next('tcl');
    await append('tool_call', toolCallId, {
      type: 'tool_call.requested',
      data: { toolCallId, sessionId, turnId, stepId, tool: 'fs.read', idempotent: true, ...extra },
    });
    return toolCallId;
  };
  const approve = async (extra: Record<string, unknown> = {}) => {
    const approvalId = ids.next('apr');
    await append('approval', approvalId, {
      type: 'approval.requested',
      data: { approvalId, sessionId, action: 'write a file', reason: 'plan mode', ...extra },
      meta: { actor: agent },
    });
    return approvalId;
  };
  return { store, ids, clock, reader, sessionId, append, run, queue, request, approve };
}
