import { z } from 'zod';
import { IdPrefix, prefixedId, SessionId } from '../ids.js';
import { defineEvent } from '../registry.js';
import { ToolCallId } from './tool-call.events.js';

export const ApprovalId = prefixedId(IdPrefix.approval);
export type ApprovalId = z.infer<typeof ApprovalId>;

export const ApprovalRequested = defineEvent({
  type: 'approval.requested',
  schemaVersion: 1,
  description: 'An action blocked by policy asked a person for approval, until `expiresAt`.',
  data: () =>
    z.object({
      approvalId: ApprovalId,
      sessionId: SessionId,
      toolCallId: ToolCallId.optional(),
      action: z.string().min(1),
      reason: z.string().min(1),
      expiresAt: z.iso.datetime().optional(),
      /** For a tool call: the tool and its normalized arguments; the approval covers exactly that call. */
      tool: z.string().min(1).optional(),
      arguments: z.json().optional(),
      runId: z.string().min(1).optional(),
    }),
});

export const ApprovalGranted = defineEvent({
  type: 'approval.granted',
  schemaVersion: 1,
  description: 'A person granted the approval; it can be consumed once.',
  data: () => z.object({ approvalId: ApprovalId, note: z.string().min(1).optional() }),
});

export const ApprovalDenied = defineEvent({
  type: 'approval.denied',
  schemaVersion: 1,
  description: 'A person denied the approval.',
  data: () => z.object({ approvalId: ApprovalId, note: z.string().min(1).optional() }),
});

export const ApprovalExpired = defineEvent({
  type: 'approval.expired',
  schemaVersion: 1,
  description: 'The approval expired before it was answered, or before a grant was used.',
  data: () => z.object({ approvalId: ApprovalId }),
});

export const ApprovalConsumed = defineEvent({
  type: 'approval.consumed',
  schemaVersion: 1,
  description: 'The granted action ran; the approval cannot be used again.',
  data: () => z.object({ approvalId: ApprovalId, toolCallId: ToolCallId.optional() }),
});

export const approvalEvents = [
  ApprovalRequested,
  ApprovalGranted,
  ApprovalDenied,
  ApprovalExpired,
  ApprovalConsumed,
] as const;
