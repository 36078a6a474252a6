import { ApprovalId, RunId, SessionId, TaskId } from '@demiurge/contracts';
import { z } from 'zod';

/**
 * The params of every operator method: snake_case, strict (an unknown key such as a camelCase
 * `sessionId` is refused, naming the key, rather than silently ignored).
 */

/** `operator.initialize`: the protocol version the client speaks and who it is; optionally a session to attach. */
export const InitializeParams = z.strictObject({
  protocol_version: z.number().int(),
  client: z.object({ name: z.string().min(1), version: z.string().min(1) }),
  /** Attach to this session: the result's `session` is its status. */
  session_id: SessionId.optional(),
});
export type InitializeParams = z.output<typeof InitializeParams>;

/** `operator.submit`: a user input; without `session_id` a new session is created. */
export const SubmitParams = z.strictObject({
  session_id: SessionId.optional(),
  text: z.string().min(1),
  /** Run the turn in plan mode. */
  plan: z.boolean().optional(),
});
export type SubmitParams = z.output<typeof SubmitParams>;

/** `operator.reply_prompt`: the answer to an `operator.prompt.opened` (may be empty: "press enter"). */
export const ReplyPromptParams = z.strictObject({
  prompt_id: z.string().min(1),
  text: z.string(),
});
export type ReplyPromptParams = z.output<typeof ReplyPromptParams>;

/** `operator.reply_approval`: a person's decision on an `operator.approval.opened`. */
export const ReplyApprovalParams = z.strictObject({
  approval_id: ApprovalId,
  decision: z.enum(['grant', 'deny']),
  note: z.string().min(1).optional(),
});
export type ReplyApprovalParams = z.output<typeof ReplyApprovalParams>;

/** `operator.interrupt`: stop the session's running turn (the session stays usable). */
export const InterruptParams = z.strictObject({ session_id: SessionId });
export type InterruptParams = z.output<typeof InterruptParams>;

/** `operator.cancel`: cancel a run, a detached task, or a session's work; at least one target. */
export const CancelParams = z
  .strictObject({
    run_id: RunId.optional(),
    task_id: TaskId.optional(),
    session_id: SessionId.optional(),
    reason: z.string().min(1).optional(),
  })
  .refine((p) => p.run_id !== undefined || p.task_id !== undefined || p.session_id !== undefined, {
    message: 'one of run_id, task_id or session_id is required',
  });
export type CancelParams = z.output<typeof CancelParams>;

/** `operator.status`: one session's status, or the host's when `session_id` is absent. */
export const StatusParams = z.strictObject({ session_id: SessionId.optional() });
export type StatusParams = z.output<typeof StatusParams>;

/** `operator.history`: a session's most recent messages, at most `limit` (1..1000). */
export const HistoryParams = z.strictObject({
  session_id: SessionId,
  limit: z.number().int().min(1).max(1000).optional(),
});
export type HistoryParams = z.output<typeof HistoryParams>;

/** `operator.compact`: compact a session's model context now (docs/compaction.md). */
export const CompactParams = z.strictObject({ session_id: SessionId });
export type CompactParams = z.output<typeof CompactParams>;

/** `operator.shutdown`: ask the host to shut down (drain and stop). */
export const ShutdownParams = z.strictObject({ reason: z.string().min(1).optional() });
export type ShutdownParams = z.output<typeof ShutdownParams>;
