import { z } from 'zod';
import { Actor } from '../envelope.js';
import { RunId, SessionId } from '../ids.js';
import { defineEvent } from '../registry.js';

const failure = z.object({ code: z.string().min(1), message: z.string().min(1) });
const owner = z.string().min(1);

export const RunQueued = defineEvent({
  type: 'run.queued',
  schemaVersion: 1,
  description: 'A run (one durable execution attempt in a session) was queued.',
  data: () => z.object({ runId: RunId, sessionId: SessionId }),
});

export const RunStarted = defineEvent({
  type: 'run.started',
  schemaVersion: 1,
  description:
    'The run started executing under its owner (the host process); `principal` is who started it and owns it ' +
    '(who may cancel it besides the admin CLI and the host).',
  data: () => z.object({ runId: RunId, owner, principal: Actor.optional() }),
});

export const RunWaiting = defineEvent({
  type: 'run.waiting',
  schemaVersion: 1,
  description: 'The run is waiting (on user input, a task or a timer).',
  data: () => z.object({ runId: RunId, reason: z.string().min(1) }),
});

export const RunPaused = defineEvent({
  type: 'run.paused',
  schemaVersion: 1,
  description: 'The run was paused; it resumes only when asked to.',
  data: () => z.object({ runId: RunId, reason: z.string().min(1) }),
});

export const RunBlocked = defineEvent({
  type: 'run.blocked',
  schemaVersion: 1,
  description: 'The run is blocked; `resumable` says whether it can continue once unblocked.',
  data: () => z.object({ runId: RunId, reason: z.string().min(1), resumable: z.boolean() }),
});

export const RunResumed = defineEvent({
  type: 'run.resumed',
  schemaVersion: 1,
  description: 'A waiting, paused or blocked run is running again, optionally from a checkpoint.',
  data: () => z.object({ runId: RunId, checkpointId: z.string().min(1).optional() }),
});

export const RunCancelRequested = defineEvent({
  type: 'run.cancel_requested',
  schemaVersion: 1,
  description: 'Cancellation of the run was requested; it stops new dispatch and settles in-flight work.',
  data: () => z.object({ runId: RunId, reason: z.string().min(1) }),
});

export const RunCancelled = defineEvent({
  type: 'run.cancelled',
  schemaVersion: 1,
  description: 'The run is cancelled; `resumable` says whether a new run may continue from its checkpoint.',
  data: () => z.object({ runId: RunId, reason: z.string().min(1), resumable: z.boolean() }),
});

export const RunCompleted = defineEvent({
  type: 'run.completed',
  schemaVersion: 1,
  description: 'The run finished successfully.',
  data: () => z.object({ runId: RunId }),
});

export const RunFailed = defineEvent({
  type: 'run.failed',
  schemaVersion: 1,
  description: 'The run ended with an error.',
  data: () => z.object({ runId: RunId, error: failure }),
});

export const RunArchived = defineEvent({
  type: 'run.archived',
  schemaVersion: 1,
  description: 'A finished run was archived; it stays readable for audit.',
  data: () => z.object({ runId: RunId }),
});

export const RunCheckpointed = defineEvent({
  type: 'run.checkpointed',
  schemaVersion: 1,
  description: 'The run recorded a checkpoint that recovery can resume from.',
  data: () => z.object({ runId: RunId, checkpointId: z.string().min(1), stage: z.string().min(1) }),
});

export const RunOwnerClaimed = defineEvent({
  type: 'run.owner_claimed',
  schemaVersion: 1,
  description: 'A host process claimed ownership of the run with a fresh lease token.',
  data: () => z.object({ runId: RunId, owner, leaseToken: z.string().min(1), leaseUntil: z.iso.datetime() }),
});

export const RunOwnerHeartbeat = defineEvent({
  type: 'run.owner_heartbeat',
  schemaVersion: 1,
  description: "The run's owner extended its lease.",
  data: () => z.object({ runId: RunId, owner, leaseToken: z.string().min(1), leaseUntil: z.iso.datetime() }),
});

export const RunOwnerLeaseExpired = defineEvent({
  type: 'run.owner_lease_expired',
  schemaVersion: 1,
  description: "The run owner's lease expired; another host may claim and recover the run.",
  data: () => z.object({ runId: RunId, owner, leaseToken: z.string().min(1) }),
});

export const runEvents = [
  RunQueued,
  RunStarted,
  RunWaiting,
  RunPaused,
  RunBlocked,
  RunResumed,
  RunCancelRequested,
  RunCancelled,
  RunCompleted,
  RunFailed,
  RunArchived,
  RunCheckpointed,
  RunOwnerClaimed,
  RunOwnerHeartbeat,
  RunOwnerLeaseExpired,
] as const;
