import type { RecordedEvent } from '@demiurge/contracts';
import { approvalRequest, replyFrame } from './frames.js';

/** How a connection's tool calls show: not at all, one line each, or with their arguments. */
export type ToolDisplay = 'quiet' | 'summary' | 'full';

/** What the relay needs of its connection. */
export interface RelayTarget {
  /** The connection's session now (it changes with `/new` and `/resume`). */
  sessionId(): string;
  readonly toolDisplay: ToolDisplay;
  emit(event: string, payload: Record<string, unknown>): void;
  /** Something the status snapshot shows changed. */
  statusChanged(): void;
  /** A task of the log changed (the connection checks that it is its session's). */
  taskChanged(taskId: string): void;
}

interface ToolCallSeen {
  readonly index: number;
  readonly name: string;
  readonly arguments: unknown;
}

/**
 * Turns committed events and operator pushes into the original protocol's events for one connection:
 * user messages, approvals, tool calls (numbered per connection) and the assistant's replies.
 */
export class SessionEventRelay {
  private readonly toolCalls = new Map<string, ToolCallSeen>();
  private readonly turnOfMessage = new Map<string, string>();

  constructor(private readonly target: RelayTarget) {}

  onStoreEvent(event: RecordedEvent): void {
    const data = event.data as Record<string, unknown>;
    const sessionId = (data.sessionId as string | undefined) ?? event.meta.sessionId;
    if (event.type.startsWith('tool_call.')) {
      this.onToolCall(event, data, sessionId);
      return;
    }
    if (sessionId !== this.target.sessionId()) return;
    switch (event.type) {
      case 'message.recorded':
        if (data.turnId !== undefined) this.turnOfMessage.set(data.messageId as string, data.turnId as string);
        if (data.role === 'user' && data.visibility !== 'transient') {
          this.target.emit('operator.message', { role: 'user', text: data.text as string });
        }
        return;
      case 'approval.requested':
        this.target.emit('operator.approval.opened', {
          approval_id: data.approvalId as string,
          request: approvalRequest(data),
        });
        this.target.statusChanged();
        return;
      case 'turn.started':
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.cancelled':
      case 'approval.granted':
      case 'approval.denied':
      case 'approval.expired':
      case 'session.mode_changed':
        this.target.statusChanged();
        return;
      default:
        if (event.type.startsWith('task.') && event.type !== 'task.log') this.target.taskChanged(data.taskId as string);
    }
  }

  /** A delivery for the operator (the outbox's operator route): the assistant's reply. */
  onPush(payload: { delivery_id: string; session_id: string; message_id: string; text: string }): void {
    if (payload.session_id !== this.target.sessionId()) return;
    this.target.emit('operator.deliver', replyFrame(payload, this.turnOfMessage.get(payload.message_id) ?? null));
  }

  private onToolCall(event: RecordedEvent, data: Record<string, unknown>, sessionId: string | undefined): void {
    const id = data.toolCallId as string;
    if (event.type === 'tool_call.requested') {
      if (sessionId !== this.target.sessionId()) return;
      const seen = { index: this.toolCalls.size + 1, name: data.tool as string, arguments: data.arguments ?? {} };
      this.toolCalls.set(id, seen);
      this.emitTool(id, seen, { phase: 'start', status: 'running', turnId: data.turnId as string });
      return;
    }
    const seen = this.toolCalls.get(id);
    if (!seen) return;
    if (event.type === 'tool_call.succeeded') {
      this.emitTool(id, seen, { phase: 'finish', status: 'ok', result: (data.output as string | undefined) ?? '' });
    } else if (event.type === 'tool_call.failed' || event.type === 'tool_call.denied') {
      const error = data.error as { message?: string } | undefined;
      this.emitTool(id, seen, { phase: 'finish', status: 'error', result: error?.message ?? event.type });
    } else if (event.type === 'tool_call.cancelled') {
      this.emitTool(id, seen, { phase: 'finish', status: 'error', result: `cancelled: ${data.reason as string}` });
    }
  }

  private emitTool(
    id: string,
    seen: ToolCallSeen,
    state: { phase: string; status: string; result?: string; turnId?: string },
  ): void {
    const display = this.target.toolDisplay;
    if (display === 'quiet') return;
    const args = seen.arguments as Record<string, unknown>;
    const summary =
      typeof args.command === 'string' ? args.command : typeof args.path === 'string' ? args.path : seen.name;
    this.target.emit('operator.deliver', {
      channel: 'tui',
      session_id: this.target.sessionId(),
      turn_id: state.turnId ?? null,
      deliveries: [],
      tool_calls: [
        {
          index: seen.index,
          name: seen.name,
          id,
          phase: state.phase,
          status: state.status,
          summary: String(summary).slice(0, 200),
          ...(display === 'full' ? { arguments: seen.arguments } : {}),
          ...(state.result === undefined ? {} : { result: state.result.slice(0, 2000) }),
        },
      ],
      tool_display: display,
    });
  }
}
