import { z } from 'zod';

/**
 * The events a server pushes to initialized clients, `{ event, payload }`. Payloads are snake_case like the
 * params; ids are the runtime's prefixed ids. Objects marked "open" may carry more fields than listed
 * (the host's richer status, for example); clients ignore what they do not know.
 */

const failure = z.object({ code: z.string().min(1), message: z.string() });

/** The first event after a successful `operator.initialize`: everything after it is live. */
export const OperatorReady = z.object({
  event: z.literal('operator.ready'),
  payload: z.object({
    protocol_version: z.number().int(),
    server: z.object({ name: z.string(), version: z.string() }),
    session_id: z.string().optional(),
  }),
});

/** A status change of a session, run or turn (open: the host may add its own status fields). */
export const OperatorStatus = z.object({
  event: z.literal('operator.status'),
  payload: z.looseObject({
    subject: z.enum(['host', 'session', 'run', 'turn']),
    /** The subject's state after the change: `completed`, `failed`, `cancelled`, `idle`, `busy`... */
    state: z.string().min(1),
    session_id: z.string().optional(),
    run_id: z.string().optional(),
    turn_id: z.string().optional(),
    reason: z.string().optional(),
    error: failure.optional(),
  }),
});

/** A message of a session's history as the operator sees it. */
export const HistoryMessage = z.looseObject({
  message_id: z.string(),
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  text: z.string(),
  turn_id: z.string().optional(),
});

/** A session's history (pushed, e.g. after attaching), oldest first. */
export const OperatorHistory = z.object({
  event: z.literal('operator.history'),
  payload: z.object({ session_id: z.string(), messages: z.array(HistoryMessage) }),
});

/** Durable host work (a delivery send, a schedule fire, a completion notice) changed status. */
export const OperatorWorkUpdated = z.object({
  event: z.literal('operator.work.updated'),
  payload: z.looseObject({
    work_id: z.string(),
    /** The work item's status after the event (see operatorEventsFrom for the mapping). */
    status: z.string().min(1),
    /** The store event that caused it, e.g. `work.failed`. */
    type: z.string().optional(),
    kind: z.string().optional(),
    error: failure.optional(),
    reason: z.string().optional(),
  }),
});

/** The agent asked the operator a question; answer with `operator.reply_prompt`. */
export const OperatorPromptOpened = z.object({
  event: z.literal('operator.prompt.opened'),
  payload: z.looseObject({
    prompt_id: z.string(),
    session_id: z.string().optional(),
    text: z.string(),
    choices: z.array(z.string()).optional(),
  }),
});

/** A policy-blocked action waits for a person; answer with `operator.reply_approval`. */
export const OperatorApprovalOpened = z.object({
  event: z.literal('operator.approval.opened'),
  payload: z.looseObject({
    approval_id: z.string(),
    session_id: z.string(),
    action: z.string(),
    reason: z.string(),
    tool: z.string().optional(),
    tool_call_id: z.string().optional(),
    run_id: z.string().optional(),
    arguments: z.json().optional(),
    expires_at: z.string().optional(),
  }),
});

/** A message was recorded in a session (transient messages are not sent). */
export const OperatorMessage = z.object({
  event: z.literal('operator.message'),
  payload: z.object({
    message_id: z.string(),
    session_id: z.string(),
    turn_id: z.string().optional(),
    role: z.enum(['user', 'assistant', 'system', 'tool']),
    text: z.string(),
    visibility: z.enum(['persist', 'model_hidden']),
  }),
});

/** A delivery intent whose channel is the operator: show it (the host pushes these itself). */
export const OperatorDeliver = z.object({
  event: z.literal('operator.deliver'),
  payload: z.looseObject({
    delivery_id: z.string(),
    session_id: z.string(),
    message_id: z.string().optional(),
    text: z.string(),
  }),
});

/** Something went wrong that is not the answer to a readable request (a malformed line, a host failure). */
export const OperatorErrorEvent = z.object({
  event: z.literal('operator.error'),
  payload: z.object({
    code: z.string().min(1),
    message: z.string(),
    field: z.string().optional(),
  }),
});

/** The server is going away; the connection ends after this event. */
export const OperatorShutdown = z.object({
  event: z.literal('operator.shutdown'),
  payload: z.object({ reason: z.string() }),
});

/** Any operator event, discriminated by `event`. */
export const OperatorEvent = z.discriminatedUnion('event', [
  OperatorReady,
  OperatorStatus,
  OperatorHistory,
  OperatorWorkUpdated,
  OperatorPromptOpened,
  OperatorApprovalOpened,
  OperatorMessage,
  OperatorDeliver,
  OperatorErrorEvent,
  OperatorShutdown,
]);
export type OperatorEvent = z.infer<typeof OperatorEvent>;

/** An event name of the protocol. */
export type OperatorEventName = OperatorEvent['event'];

/** The payload type of one event. */
export type OperatorEventPayload<N extends OperatorEventName> = Extract<OperatorEvent, { event: N }>['payload'];

/** Every event name, in catalog order. */
export const operatorEventNames = [
  'operator.ready',
  'operator.status',
  'operator.history',
  'operator.work.updated',
  'operator.prompt.opened',
  'operator.approval.opened',
  'operator.message',
  'operator.deliver',
  'operator.error',
  'operator.shutdown',
] as const satisfies readonly OperatorEventName[];
