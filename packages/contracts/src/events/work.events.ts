import { z } from 'zod';
import { WorkId } from '../ids.js';
import { defineEvent } from '../registry.js';

const failure = z.object({ code: z.string().min(1), message: z.string().min(1) });
/** The fencing token of one claim: every later write of that claim carries it. */
const claimToken = z.string().min(1);

/** An operator's (or reconciler's) decision on work whose outcome is unknown. */
export const WorkResolution = z.enum(['sent', 'failed', 'retry']);
export type WorkResolution = z.infer<typeof WorkResolution>;

export const WorkEnqueued = defineEvent({
  type: 'work.enqueued',
  schemaVersion: 1,
  description: 'Durable host work (a delivery send, a schedule fire, a completion notice...) was enqueued.',
  data: () =>
    z.object({
      workId: WorkId,
      kind: z.string().min(1),
      subjectId: z.string().min(1),
      /** What the work needs (validated by its kind's schema when claimed; unreadable → `work.corrupt`). */
      payload: z.json().optional(),
      notBefore: z.iso.datetime().optional(),
    }),
});

export const WorkClaimed = defineEvent({
  type: 'work.claimed',
  schemaVersion: 1,
  description: 'A worker claimed the work with a fresh claim token and attempt number, until `leaseUntil`.',
  data: () =>
    z.object({
      workId: WorkId,
      claimToken,
      attempt: z.number().int().positive(),
      owner: z.string().min(1),
      leaseUntil: z.iso.datetime(),
    }),
});

export const WorkRunning = defineEvent({
  type: 'work.running',
  schemaVersion: 1,
  description: 'The claimant started executing the work.',
  data: () => z.object({ workId: WorkId, claimToken }),
});

export const WorkSending = defineEvent({
  type: 'work.sending',
  schemaVersion: 1,
  description: 'The claimant is about to perform an external send; from here it is never claimed again.',
  data: () => z.object({ workId: WorkId, claimToken }),
});

export const WorkHeartbeat = defineEvent({
  type: 'work.heartbeat',
  schemaVersion: 1,
  description: 'The claimant extended its lease on the work.',
  data: () => z.object({ workId: WorkId, claimToken, leaseUntil: z.iso.datetime() }),
});

export const WorkSucceeded = defineEvent({
  type: 'work.succeeded',
  schemaVersion: 1,
  description: 'The work finished successfully; `externalRef` names its effect outside (a message id...).',
  data: () => z.object({ workId: WorkId, claimToken, externalRef: z.string().min(1).optional() }),
});

export const WorkFailed = defineEvent({
  type: 'work.failed',
  schemaVersion: 1,
  description: 'An attempt failed; with `retryAt` the work is scheduled for another attempt, else it failed for good.',
  data: () => z.object({ workId: WorkId, claimToken, error: failure, retryAt: z.iso.datetime().optional() }),
});

export const WorkCancelled = defineEvent({
  type: 'work.cancelled',
  schemaVersion: 1,
  description: 'The work was cancelled before it reached an external send.',
  data: () => z.object({ workId: WorkId, reason: z.string().min(1) }),
});

export const WorkUnknown = defineEvent({
  type: 'work.unknown',
  schemaVersion: 1,
  description: 'The outcome of an external send is unknown; only an operator or a reconciler resolves it.',
  data: () => z.object({ workId: WorkId, claimToken, reason: z.string().min(1) }),
});

export const WorkLeaseExpired = defineEvent({
  type: 'work.lease_expired',
  schemaVersion: 1,
  description: "A claim's lease expired: claimed or running work is rescheduled, sending work becomes unknown.",
  data: () => z.object({ workId: WorkId, claimToken, attempt: z.number().int().positive() }),
});

export const WorkAcknowledged = defineEvent({
  type: 'work.acknowledged',
  schemaVersion: 1,
  description: 'The consumer acknowledged the work; it is done and leaves the unfinished-work surface.',
  data: () => z.object({ workId: WorkId, claimToken: claimToken.optional() }),
});

export const WorkResolved = defineEvent({
  type: 'work.resolved',
  schemaVersion: 1,
  description: 'An operator decided the outcome of unknown work: sent (succeeded), failed, or retry.',
  data: () =>
    z.object({
      workId: WorkId,
      decision: WorkResolution,
      retryAt: z.iso.datetime().optional(),
      note: z.string().min(1).optional(),
    }),
});

export const WorkCorrupt = defineEvent({
  type: 'work.corrupt',
  schemaVersion: 1,
  description: 'The work item cannot be read or executed (bad payload); it is set aside for an operator.',
  data: () => z.object({ workId: WorkId, detail: z.string().min(1) }),
});

export const workEvents = [
  WorkEnqueued,
  WorkClaimed,
  WorkRunning,
  WorkSending,
  WorkHeartbeat,
  WorkSucceeded,
  WorkFailed,
  WorkCancelled,
  WorkUnknown,
  WorkLeaseExpired,
  WorkAcknowledged,
  WorkResolved,
  WorkCorrupt,
] as const;
