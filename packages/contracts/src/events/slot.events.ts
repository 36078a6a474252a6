import { z } from 'zod';
import { IdPrefix, prefixedId, SessionId } from '../ids.js';
import { defineEvent } from '../registry.js';

export const SlotRunId = prefixedId(IdPrefix.slotRun);
export type SlotRunId = z.infer<typeof SlotRunId>;

/** The phase a slot runs in (seed 003 Agent Slot Layout). */
export const SlotPhase = z.enum(['bootstrap', 'input', 'output']);
export type SlotPhase = z.infer<typeof SlotPhase>;

export const SlotStarted = defineEvent({
  type: 'slot.started',
  schemaVersion: 1,
  description: 'One invocation of an Agent Core slot began (serial slots in order, parallel ones in the background).',
  data: () =>
    z.object({
      slotRunId: SlotRunId,
      sessionId: SessionId,
      turnId: z.string().min(1).optional(),
      coreId: z.string().min(1),
      slotId: z.string().min(1),
      phase: SlotPhase,
      mode: z.enum(['serial', 'parallel']),
    }),
});

export const SlotFinished = defineEvent({
  type: 'slot.finished',
  schemaVersion: 1,
  description: 'The slot invocation returned.',
  data: () => z.object({ slotRunId: SlotRunId, durationMs: z.number().nonnegative() }),
});

export const SlotFailed = defineEvent({
  type: 'slot.failed',
  schemaVersion: 1,
  description:
    'The slot raised (or broke a rule, such as a parallel slot touching the main flow); `policy` says whether the turn continued (soft) or failed (hard).',
  data: () =>
    z.object({
      slotRunId: SlotRunId,
      error: z.object({ code: z.string().min(1), message: z.string().min(1) }),
      policy: z.enum(['soft', 'hard']),
    }),
});

export const SlotTimedOut = defineEvent({
  type: 'slot.timed_out',
  schemaVersion: 1,
  description: 'The slot ran past its timeout_seconds and was abandoned; `policy` as for slot.failed.',
  data: () =>
    z.object({ slotRunId: SlotRunId, timeoutSeconds: z.number().positive(), policy: z.enum(['soft', 'hard']) }),
});

export const slotEvents = [SlotStarted, SlotFinished, SlotFailed, SlotTimedOut] as const;
