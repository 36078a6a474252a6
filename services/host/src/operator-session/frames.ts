import type { DomainEventData } from '@demiurge/contracts';
import type { TaskView } from '@demiurge/projector-task-board';

/**
 * The original operator protocol's frame payloads, built from this runtime's read models. Pure: no app,
 * no IO, so every shape the original client reads is in one place.
 */

/** A text for the operator as a slash command's answer (`operator.deliver`, a system message). */
export function outputFrame(command: string, text: string): Record<string, unknown> {
  return {
    channel: 'tui',
    deliveries: [
      {
        type: 'text',
        kind: 'message',
        text,
        fallback_text: text,
        visible: true,
        metadata: { command, role: 'system' },
      },
    ],
  };
}

/** A notice (`operator.deliver`, kind `notice`) at a level. */
export function noticeFrame(text: string, level: 'info' | 'warning' | 'error'): Record<string, unknown> {
  return {
    channel: 'tui',
    deliveries: [{ type: 'text', kind: 'notice', text, fallback_text: text, visible: true, metadata: { level } }],
  };
}

/** A task as the original's work list shows it (`operator.work.updated`, the snapshot's `work`). */
export function workItem(task: TaskView): Record<string, unknown> {
  return {
    work_id: task.taskId,
    kind: task.kind,
    status: task.status,
    source: 'task',
    task_id: task.taskId,
    delivery_id: null,
    schedule_id: null,
    summary: task.summary ?? task.title,
    updated_at: task.updatedAt,
  };
}

/** Tool arguments with long strings cut, for an approval's `arguments_preview`. */
export function preview(args: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(typeof args === 'object' && args !== null ? args : {})) {
    out[key] = typeof value === 'string' && value.length > 200 ? `${value.slice(0, 200)}…` : value;
  }
  return out;
}

/** A string argument of a tool call's arguments (`command`, `path`), if it has one. */
export function argumentText(args: unknown, key: string): string | undefined {
  if (typeof args !== 'object' || args === null || !(key in args)) return undefined;
  const value: unknown = Reflect.get(args, key);
  return typeof value === 'string' ? value : undefined;
}

/** The `request` of `operator.approval.opened`, from an `approval.requested` event's data. */
export function approvalRequest(data: DomainEventData<'approval.requested'>): Record<string, unknown> {
  const args = data.arguments ?? {};
  const tool = data.tool ?? '';
  return {
    tool_name: tool,
    tool_call_id: data.toolCallId ?? '',
    turn_id: '',
    capability: data.action,
    action: data.action,
    risk: tool === 'shell' ? 'high' : 'medium',
    summary: data.reason,
    target: argumentText(args, 'path') ?? null,
    command: argumentText(args, 'command') ?? null,
    arguments_preview: preview(args),
    // This project's fields, for clients that know them.
    session_id: data.sessionId,
    ...(data.runId === undefined ? {} : { run_id: data.runId }),
    ...(data.expiresAt === undefined ? {} : { expires_at: data.expiresAt }),
  };
}

/** A delivery for the operator (the outbox's operator route) as `operator.deliver`: the assistant's reply. */
export function replyFrame(
  payload: { delivery_id: string; session_id: string; message_id: string; text: string },
  turnId: string | null,
): Record<string, unknown> {
  return {
    channel: 'tui',
    session_id: payload.session_id,
    turn_id: turnId,
    metadata: {},
    deliveries: [
      {
        type: 'text',
        kind: 'message',
        text: payload.text,
        fallback_text: payload.text,
        visible: true,
        history_policy: 'persist',
        metadata: { role: 'assistant', delivery_id: payload.delivery_id, message_id: payload.message_id },
      },
    ],
    // This project's fields.
    delivery_id: payload.delivery_id,
    message_id: payload.message_id,
    text: payload.text,
  };
}

/** `operator.history`: the transcript in the original's items, and in this project's shape. */
export function historyFrame(
  sessionId: string,
  messages: readonly { messageId: string; role: string; text: string; turnId: string | null }[],
): Record<string, unknown> {
  const items = messages
    .filter((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'system')
    .map((m) => ({ type: 'message', id: m.messageId, role: m.role, text: m.text }));
  return {
    session_id: sessionId,
    items,
    // This project's shape, for clients that know it.
    messages: messages.map((m) => ({
      message_id: m.messageId,
      role: m.role,
      text: m.text,
      ...(m.turnId ? { turn_id: m.turnId } : {}),
    })),
  };
}
