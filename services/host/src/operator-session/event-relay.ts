import { asDomainEvent, type DomainEvent, type RecordedEvent } from '@demiurge/contracts';
import { approvalRequest, argumentText, replyFrame } from './frames.js';

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

  onStoreEvent(recorded: RecordedEvent): void {
    const event = asDomainEvent(recorded);
    const sessionId = ('sessionId' in event.data ? event.data.sessionId : undefined) ?? event.meta.sessionId;
    if (event.type.startsWith('tool_call.')) {
      this.onToolCall(event, sessionId);
      return;
    }
    if (sessionId !== this.target.sessionId()) return;
    switch (event.type) {
      case 'message.recorded': {
        const d = event.data;
        if (d.turnId !== undefined) this.turnOfMessage.set(d.messageId, d.turnId);
        if (d.role === 'user' && d.visibility !== 'transient') {
          this.target.emit('operator.message', { role: 'user', text: d.text });
        }
        return;
      }
      case 'approval.requested':
        this.target.emit('operator.approval.opened', {
          approval_id: event.data.approvalId,
          request: approvalRequest(event.data),
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
        if (event.type.startsWith('task.') && event.type !== 'task.log' && 'taskId' in event.data) {
          const { taskId } = event.data;
          if (taskId !== undefined) this.target.taskChanged(taskId);
        }
    }
  }

  /** A delivery for the operator (the outbox's operator route): the assistant's reply. */
  onPush(payload: { delivery_id: string; session_id: string; message_id: string; text: string }): void {
    if (payload.session_id !== this.target.sessionId()) return;
    this.target.emit('operator.deliver', replyFrame(payload, this.turnOfMessage.get(payload.message_id) ?? null));
  }

  private onToolCall(event: DomainEvent, sessionId: string | undefined): void {
    const id = 'toolCallId' in event.data ? event.data.toolCallId : undefined;
    if (id === undefined) return;
    switch (event.type) {
      case 'tool_call.requested': {
        if (sessionId !== this.target.sessionId()) return;
        const d = event.data;
        const seen = { index: this.toolCalls.size + 1, name: d.tool, arguments: d.arguments ?? {} };
        this.toolCalls.set(id, seen);
        this.emitTool(id, seen, { phase: 'start', status: 'running', turnId: d.turnId });
        return;
      }
      case 'tool_call.succeeded':
      case 'tool_call.failed':
      case 'tool_call.denied':
      case 'tool_call.cancelled': {
        const seen = this.toolCalls.get(id);
        if (!seen) return;
        if (event.type === 'tool_call.succeeded') {
          this.emitTool(id, seen, { phase: 'finish', status: 'ok', result: event.data.output ?? '' });
        } else if (event.type === 'tool_call.failed') {
          this.emitTool(id, seen, { phase: 'finish', status: 'error', result: event.data.error.message });
        } else if (event.type === 'tool_call.denied') {
          this.emitTool(id, seen, { phase: 'finish', status: 'error', result: event.type });
        } else {
          this.emitTool(id, seen, { phase: 'finish', status: 'error', result: `cancelled: ${event.data.reason}` });
        }
        return;
      }
      default:
        return;
    }
  }

  private emitTool(
    id: string,
    seen: ToolCallSeen,
    state: { phase: string; status: string; result?: string; turnId?: string },
  ): void {
    const display = this.target.toolDisplay;
    if (display === 'quiet') return;
    const summary = argumentText(seen.arguments, 'command') ?? argumentText(seen.arguments, 'path') ?? seen.name;
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
