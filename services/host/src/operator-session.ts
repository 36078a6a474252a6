import type { RecordedEvent } from '@demiurge/contracts';
import type { OperatorSession, SessionApprovalDecision, SessionOpen } from '@demiurge/operator';
import type { TaskView } from '@demiurge/projector-task-board';
import { merge, type Subscription } from 'rxjs';
import type { DemiurgeApp } from './app.js';

/**
 * Settings of session-bound (original-protocol) connections, as the original client passes them in
 * `DEMIURGE_TUI_GATEWAY_CONFIG`: the session to continue, how a second input is handled, how tool calls show.
 */
export interface SessionGatewayOptions {
  /** Continue this session (`session` or `resume` of the config); default: a new session per connection. */
  readonly sessionId?: string;
  readonly busyMode?: 'interrupt' | 'queue';
  readonly toolDisplay?: 'quiet' | 'summary' | 'full';
  readonly timezone?: string;
  /** `operator.shutdown` or `/exit`: the gateway process should end with code 0. */
  readonly onExit?: () => void;
}

/** A slash command of the session dialect, listed in `operator.ready` (`slash_commands`). */
interface SlashSpec {
  readonly name: string;
  readonly description: string;
  readonly group: string;
  readonly usage: string | null;
}

const SLASH_COMMANDS: readonly SlashSpec[] = [
  { name: 'help', description: 'list the commands', group: 'general', usage: null },
  { name: 'status', description: 'the session and host status', group: 'general', usage: null },
  { name: 'tasks', description: "the session's detached tasks", group: 'tasks', usage: null },
  { name: 'task', description: 'one task: status, output tail', group: 'tasks', usage: '/task ID' },
  { name: 'cancel', description: 'cancel a task, or the running turn', group: 'tasks', usage: '/cancel [TASK_ID]' },
  { name: 'interrupt', description: 'interrupt the running turn', group: 'tasks', usage: null },
  { name: 'plan', description: 'plan mode: mutating tools need an approval', group: 'session', usage: '/plan on|off' },
  { name: 'approvals', description: 'open approvals of this session', group: 'session', usage: null },
  { name: 'sessions', description: 'recent sessions', group: 'session', usage: '/sessions [N]' },
  { name: 'new', description: 'start a new session', group: 'session', usage: null },
  { name: 'resume', description: 'continue another session', group: 'session', usage: '/resume [ID]' },
  { name: 'history', description: "show this session's history again", group: 'session', usage: null },
  { name: 'doctor', description: 'check the host', group: 'general', usage: null },
  { name: 'exit', description: 'leave', group: 'general', usage: null },
  { name: 'quit', description: 'leave', group: 'general', usage: null },
];

/** Commands of the original that this runtime does not have (yet): answered `{ handled: false }` with a notice. */
const NOT_HERE = new Set(['compact', 'evolve', 'rollback', 'packages', 'skills', 'skill', 'versions', 'core']);

const TERMINAL_TASK = new Set(['completed', 'failed', 'cancelled', 'deleted', 'archived']);

interface ToolCallSeen {
  readonly index: number;
  readonly name: string;
  readonly arguments: unknown;
}

/**
 * One session-bound connection over a running host (the original operator protocol): the connection's
 * session, its turns and events in the original shapes, and the slash commands. Every answer is a result;
 * a failure is `{ accepted: false, reason }` (or `{ handled: false }`) plus a notice.
 */
export class HostOperatorSession implements OperatorSession {
  private sessionId = '';
  private readonly subscription: Subscription;
  private closed = false;
  private lastError = '';
  private readonly queue: string[] = [];
  private readonly active = new Set<Promise<unknown>>();
  private readonly toolCalls = new Map<string, ToolCallSeen>();
  private readonly turnOfMessage = new Map<string, string>();
  private readonly prompts = new Map<string, { kind: 'resume'; choices: string[] }>();
  private promptCounter = 0;
  private busyMode: 'interrupt' | 'queue';
  private readonly toolDisplay: 'quiet' | 'summary' | 'full';

  constructor(
    private readonly app: DemiurgeApp,
    private readonly open: SessionOpen,
    private readonly options: SessionGatewayOptions,
  ) {
    this.busyMode = options.busyMode ?? 'interrupt';
    this.toolDisplay = options.toolDisplay ?? 'summary';
    this.subscription = merge(app.store.events$, app.pushes$).subscribe((e) => {
      if (this.closed || this.sessionId === '') return;
      try {
        if ('event' in e) this.onPush(e.payload);
        else this.onStoreEvent(e);
      } catch (error) {
        process.stderr.write(`demiurge: operator session: ${(error as Error).message}\n`);
      }
    });
  }

  async initialize(): Promise<Record<string, unknown>> {
    if (this.sessionId === '') {
      const wanted = this.open.sessionId ?? this.options.sessionId;
      if (wanted !== undefined) {
        // A missing session is a startup failure (the caller answers it; the original exits 1).
        this.sessionId = (await this.app.runtime.sessions.get(wanted)).sessionId;
      } else {
        this.sessionId = (await this.newSession()).sessionId;
      }
    }
    return this.snapshot();
  }

  announce(): void {
    void (async () => {
      this.emit('operator.ready', { ...(await this.readyPayload()) });
      const session = await this.app.runtime.sessions.get(this.sessionId);
      if (session.messageCount > 0) await this.emitHistory();
      await this.emitStatus();
    })().catch((error) => this.fail(error));
  }

  async submit(p: { text: string; session_id?: string; plan?: boolean }): Promise<unknown> {
    const text = p.text.trim();
    if (!text) return { accepted: false, reason: 'empty' };
    try {
      if (p.session_id !== undefined && p.session_id !== this.sessionId) await this.bind(p.session_id);
      if (p.plan !== undefined) await this.app.runtime.sessions.setMode(this.sessionId, p.plan ? 'plan' : 'default');
      if (await this.running()) {
        if (this.busyMode === 'queue') {
          this.queue.push(text);
          this.notice(`queued input: ${text.slice(0, 100)}`);
          await this.emitStatus();
          return { accepted: true, queued: true };
        }
        this.notice('interrupting current turn: new input');
        await this.app.interrupt(this.sessionId, 'interrupted by new input');
        await Promise.allSettled([...this.active]);
      }
      await this.start(text);
      return { accepted: true, queued: false };
    } catch (error) {
      this.fail(error);
      return { accepted: false, reason: (error as Error).message };
    }
  }

  async replyPrompt(p: { prompt_id: string; answer: string }): Promise<unknown> {
    const prompt = this.prompts.get(p.prompt_id);
    if (!prompt) return { accepted: false, reason: 'prompt not pending' };
    this.prompts.delete(p.prompt_id);
    const answer = p.answer.trim() || prompt.choices[0] || '';
    const chosen = /^\d+$/.test(answer) ? prompt.choices[Number(answer) - 1] : answer;
    if (!chosen || !prompt.choices.includes(chosen)) {
      await this.emitStatus();
      return { accepted: false, reason: 'invalid session selection' };
    }
    await this.resumeSession(chosen);
    return { accepted: true, kind: 'resume', session_id: chosen };
  }

  async replyApproval(p: { approval_id: string; decision: SessionApprovalDecision }): Promise<unknown> {
    const actor = { kind: 'operator' as const, id: 'operator' };
    try {
      const view = await this.app.runtime.approvals.get(p.approval_id);
      if (view.status !== 'requested') return { accepted: false, reason: 'approval not pending' };
      if (p.decision === 'deny') await this.app.runtime.approvals.deny(p.approval_id, actor, 'denied in the TUI');
      else
        await this.app.runtime.approvals.grant(
          p.approval_id,
          actor,
          p.decision === 'session' ? 'allowed for the session in the TUI (this runtime grants this call)' : undefined,
        );
      await this.emitStatus();
      return { accepted: true, decision: p.decision };
    } catch (error) {
      return { accepted: false, reason: (error as Error).message };
    }
  }

  async command(p: { text: string }): Promise<unknown> {
    const text = p.text.trim();
    if (!text.startsWith('/')) return { handled: false, reason: 'not a slash command' };
    const [head = '', ...rest] = text.slice(1).split(/\s+/);
    const name = head.toLowerCase();
    const args = rest.join(' ').trim();
    let handled = true;
    let exit = false;
    try {
      if (name === 'exit' || name === 'quit') {
        await this.shutdown();
        return { handled: true, exit: true };
      }
      handled = await this.runCommand(name, args);
    } catch (error) {
      this.notice(`/${name} failed: ${(error as Error).message}`, 'error');
    }
    exit = this.closed;
    await this.emitStatus();
    return { handled, exit };
  }

  async interrupt(p: { reason: string }): Promise<unknown> {
    if (!(await this.running())) {
      this.notice('no running turn');
      return { interrupted: true };
    }
    this.notice(`interrupting current turn: ${p.reason}`);
    this.queue.length = 0;
    await this.app.interrupt(this.sessionId, `interrupted: ${p.reason}`);
    await Promise.allSettled([...this.active]);
    this.notice('turn interrupted');
    await this.emitStatus();
    return { interrupted: true };
  }

  async shutdown(): Promise<unknown> {
    this.emit('operator.shutdown', {});
    this.close();
    this.options.onExit?.();
    return { shutdown: true };
  }

  close(): void {
    this.closed = true;
    this.subscription.unsubscribe();
  }

  // ---- turns

  private async start(text: string): Promise<void> {
    const submitted = await this.app.submit({ sessionId: this.sessionId, text });
    const outcome = submitted.outcome.then(
      (o) => {
        if (o.status === 'failed') this.fail(new Error(`the turn failed: ${o.error?.message ?? o.text}`));
      },
      (error) => this.fail(error),
    );
    this.active.add(outcome);
    void outcome.finally(() => {
      this.active.delete(outcome);
      const next = this.queue.shift();
      if (next !== undefined && !this.closed) void this.start(next).catch((error) => this.fail(error));
      else void this.emitStatus();
    });
    await this.emitStatus();
  }

  private async running(): Promise<boolean> {
    if (this.active.size > 0) return true;
    const session = await this.app.runtime.sessions.get(this.sessionId);
    return session.activeTurnId !== null;
  }

  private async newSession() {
    return this.app.runtime.sessions.create({ title: 'TUI session', coreId: this.app.core.id });
  }

  private async bind(sessionId: string): Promise<void> {
    await this.app.runtime.sessions.get(sessionId);
    this.sessionId = sessionId;
    this.queue.length = 0;
  }

  private async resumeSession(sessionId: string): Promise<void> {
    await this.bind(sessionId);
    await this.emitHistory();
    this.notice(`resumed session: ${sessionId}`);
    await this.emitStatus();
  }

  // ---- events in the original shapes

  private onStoreEvent(event: RecordedEvent): void {
    const data = event.data as Record<string, unknown>;
    const sessionId = (data.sessionId as string | undefined) ?? event.meta.sessionId;
    if (event.type.startsWith('tool_call.')) {
      this.onToolCall(event, data, sessionId);
      return;
    }
    if (sessionId !== this.sessionId) return;
    switch (event.type) {
      case 'message.recorded':
        if (data.turnId !== undefined) this.turnOfMessage.set(data.messageId as string, data.turnId as string);
        if (data.role === 'user' && data.visibility !== 'transient') {
          this.emit('operator.message', { role: 'user', text: data.text as string });
        }
        return;
      case 'approval.requested':
        this.emit('operator.approval.opened', {
          approval_id: data.approvalId as string,
          request: this.approvalRequest(data),
        });
        void this.emitStatus();
        return;
      case 'turn.started':
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.cancelled':
      case 'approval.granted':
      case 'approval.denied':
      case 'approval.expired':
      case 'session.mode_changed':
        void this.emitStatus();
        return;
      default:
        if (event.type.startsWith('task.') && event.type !== 'task.log') void this.emitTask(data.taskId as string);
    }
  }

  private approvalRequest(data: Record<string, unknown>): Record<string, unknown> {
    const args = (data.arguments ?? {}) as Record<string, unknown>;
    const tool = (data.tool as string | undefined) ?? '';
    const command = typeof args.command === 'string' ? args.command : null;
    const target = typeof args.path === 'string' ? args.path : null;
    return {
      tool_name: tool,
      tool_call_id: (data.toolCallId as string | undefined) ?? '',
      turn_id: '',
      capability: data.action as string,
      action: data.action as string,
      risk: tool === 'shell' ? 'high' : 'medium',
      summary: data.reason as string,
      target,
      command,
      arguments_preview: preview(args),
      // This project's fields, for clients that know them.
      session_id: data.sessionId as string,
      ...(data.runId === undefined ? {} : { run_id: data.runId as string }),
      ...(data.expiresAt === undefined ? {} : { expires_at: data.expiresAt as string }),
    };
  }

  private onToolCall(event: RecordedEvent, data: Record<string, unknown>, sessionId: string | undefined): void {
    const id = data.toolCallId as string;
    if (event.type === 'tool_call.requested') {
      if (sessionId !== this.sessionId) return;
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
    if (this.toolDisplay === 'quiet') return;
    const args = seen.arguments as Record<string, unknown>;
    const summary =
      typeof args.command === 'string' ? args.command : typeof args.path === 'string' ? args.path : seen.name;
    this.emit('operator.deliver', {
      channel: 'tui',
      session_id: this.sessionId,
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
          ...(this.toolDisplay === 'full' ? { arguments: seen.arguments } : {}),
          ...(state.result === undefined ? {} : { result: state.result.slice(0, 2000) }),
        },
      ],
      tool_display: this.toolDisplay,
    });
  }

  /** A delivery for the operator (the outbox's operator route): the assistant's reply. */
  private onPush(payload: { delivery_id: string; session_id: string; message_id: string; text: string }): void {
    if (payload.session_id !== this.sessionId) return;
    this.emit('operator.deliver', {
      channel: 'tui',
      session_id: payload.session_id,
      turn_id: this.turnOfMessage.get(payload.message_id) ?? null,
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
    });
  }

  private async emitTask(taskId: string): Promise<void> {
    const task = await this.task(taskId);
    if (!task || task.sessionId !== this.sessionId) return;
    this.emit('operator.work.updated', workItem(task));
    await this.emitStatus();
  }

  private async emitHistory(): Promise<void> {
    const messages = await this.app.runtime.sessions.history(this.sessionId);
    const items = messages
      .filter((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'system')
      .map((m) => ({ type: 'message', id: m.messageId, role: m.role, text: m.text }));
    this.emit('operator.history', {
      session_id: this.sessionId,
      items,
      // This project's shape, for clients that know it.
      messages: messages.map((m) => ({
        message_id: m.messageId,
        role: m.role,
        text: m.text,
        ...(m.turnId ? { turn_id: m.turnId } : {}),
      })),
    });
  }

  private async emitStatus(): Promise<void> {
    if (this.closed) return;
    try {
      this.emit('operator.status', await this.snapshot());
    } catch (error) {
      this.fail(error);
    }
  }

  private async readyPayload(): Promise<Record<string, unknown>> {
    const s = await this.snapshot();
    return {
      core_id: s.core_id,
      core_revision: s.core_revision,
      session_id: s.session_id,
      session: s.session,
      workspace: s.workspace,
      provider: s.provider,
      model: s.model,
      runtime_timezone: s.runtime_timezone,
      runtime_timezone_source: s.runtime_timezone_source,
      tool_display: s.tool_display,
      user_message_align: s.user_message_align,
      demiurge_theme_color: s.demiurge_theme_color,
      user_theme_color: s.user_theme_color,
      busy_mode: s.busy_mode,
      slash_commands: SLASH_COMMANDS,
    };
  }

  /** The original status snapshot (plus this project's `mode`). */
  private async snapshot(): Promise<Record<string, unknown>> {
    const { app } = this;
    const session = await app.runtime.sessions.get(this.sessionId);
    const tasks = await app.runtime.controlPlane.listTasks(this.sessionId);
    const approvals = await app.runtime.approvals.listOpen(this.sessionId);
    const running = this.active.size > 0 || session.activeTurnId !== null;
    const zone = this.options.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    return {
      workspace: app.workspace,
      core_id: app.core.id,
      core_revision: app.core.revision.slice(0, 12),
      session_id: this.sessionId,
      provider: app.provider.name,
      model: app.provider.model,
      runtime_timezone: zone,
      runtime_timezone_source: this.options.timezone ? 'config' : 'system',
      session: { session_id: this.sessionId, channel: 'operator', source: 'tui', conversation_key: this.sessionId },
      status: running ? 'running' : 'idle',
      tool_display: this.toolDisplay,
      user_message_align: 'left',
      demiurge_theme_color: '#ff9afc',
      user_theme_color: '#9cc9ff',
      busy_mode: this.busyMode,
      queued_inputs: this.queue.length,
      background_tasks: tasks.filter((t) => !TERMINAL_TASK.has(t.status)).length,
      message_count: session.messageCount,
      pending_prompts: this.prompts.size,
      pending_approvals: approvals.length,
      last_error: this.lastError,
      work: tasks.slice(-20).map(workItem),
      mode: session.mode,
    };
  }

  // ---- slash commands

  private async runCommand(name: string, args: string): Promise<boolean> {
    const { app } = this;
    switch (name) {
      case 'help':
        this.output(
          'help',
          [
            'Commands:',
            ...SLASH_COMMANDS.map((c) => `  ${(c.usage ?? `/${c.name}`).padEnd(20)} ${c.description}`),
            '',
            'Enter submits. Ctrl-C interrupts a running turn.',
          ].join('\n'),
        );
        return true;
      case 'status': {
        const s = await this.snapshot();
        const keys = ['session_id', 'status', 'mode', 'provider', 'model', 'workspace', 'core_id', 'busy_mode'];
        const more = ['message_count', 'background_tasks', 'pending_approvals', 'queued_inputs', 'last_error'];
        this.output('status', ['Status', ...[...keys, ...more].map((k) => `  ${k}: ${String(s[k] ?? '')}`)].join('\n'));
        return true;
      }
      case 'tasks': {
        const tasks = await app.runtime.controlPlane.listTasks(this.sessionId);
        this.output(
          'tasks',
          tasks.length === 0
            ? 'no tasks in this session'
            : ['Tasks', ...tasks.map((t) => `  ${t.taskId}  ${t.kind}  ${t.status}  ${t.title}`)].join('\n'),
        );
        return true;
      }
      case 'task': {
        if (!args) {
          this.output('task', 'usage: /task ID');
          return true;
        }
        const task = await this.task(args);
        if (!task || task.sessionId !== this.sessionId) {
          this.notice(`task ${args} not found in this session`, 'error');
          return true;
        }
        const lines = [
          `task ${task.taskId}`,
          `  kind: ${task.kind}`,
          `  status: ${task.status}`,
          `  title: ${task.title}`,
          ...(task.summary ? [`  summary: ${task.summary}`] : []),
          ...task.logTail.map((l) => `  | ${l.text}`),
        ];
        this.output('task', lines.join('\n'));
        return true;
      }
      case 'cancel': {
        if (!args) {
          await this.interrupt({ reason: '/cancel' });
          return true;
        }
        const task = await this.task(args);
        if (!task || task.sessionId !== this.sessionId) {
          this.notice(`task ${args} not found in this session`, 'error');
          return true;
        }
        await app.cancelTask({ sessionId: this.sessionId, taskId: task.taskId }, 'cancelled in the TUI');
        this.output('cancel', `cancel requested: ${task.taskId}`);
        return true;
      }
      case 'interrupt':
        await this.interrupt({ reason: '/interrupt' });
        return true;
      case 'plan': {
        const arg = args.toLowerCase();
        if (arg === '') {
          const session = await app.runtime.sessions.get(this.sessionId);
          this.output('plan', `plan mode: ${session.mode === 'plan' ? 'on' : 'off'}`);
          return true;
        }
        if (!['on', 'off'].includes(arg)) {
          this.output('plan', 'usage: /plan on|off');
          return true;
        }
        await app.runtime.sessions.setMode(this.sessionId, arg === 'on' ? 'plan' : 'default');
        this.output('plan', `plan mode: ${arg}`);
        return true;
      }
      case 'approvals': {
        const open = await app.runtime.approvals.listOpen(this.sessionId);
        this.output(
          'approvals',
          open.length === 0
            ? 'no open approvals'
            : ['Approvals', ...open.map((a) => `  ${a.approvalId}  ${a.tool ?? a.action}  ${a.reason}`)].join('\n'),
        );
        return true;
      }
      case 'sessions': {
        const limit = /^\d+$/.test(args) ? Number(args) : 20;
        const sessions = (await app.runtime.sessions.list())
          .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
          .slice(0, limit);
        this.output(
          'sessions',
          [
            'Sessions',
            ...sessions.map(
              (s) =>
                `${s.sessionId === this.sessionId ? '*' : ' '} ${s.sessionId}  ${s.updatedAt}  ${s.messageCount} msgs  ${s.title}`,
            ),
          ].join('\n'),
        );
        return true;
      }
      case 'new': {
        const session = await this.newSession();
        await this.bind(session.sessionId);
        await this.emitHistory();
        this.notice(`new session: ${session.sessionId}`);
        return true;
      }
      case 'resume': {
        if (args) {
          try {
            await app.runtime.sessions.get(args);
          } catch {
            this.notice('session not found', 'error');
            return true;
          }
          await this.resumeSession(args);
          return true;
        }
        const sessions = (await app.runtime.sessions.list())
          .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
          .slice(0, 20);
        const promptId = `prompt_${++this.promptCounter}`;
        const choices = sessions.map((s) => s.sessionId);
        this.prompts.set(promptId, { kind: 'resume', choices });
        this.emit('operator.prompt.opened', {
          prompt_id: promptId,
          kind: 'resume',
          question: 'Resume session',
          choices,
          records: sessions.map((s) => ({
            session_id: s.sessionId,
            title: s.title,
            updated_at: s.updatedAt,
            channel: s.binding?.channel ?? null,
            message_count: s.messageCount,
            preview: s.lastMessage?.text.slice(0, 80) ?? null,
          })),
          metadata: { kind: 'resume' },
        });
        return true;
      }
      case 'history':
        await this.emitHistory();
        return true;
      case 'doctor': {
        const work = await app.runtime.host.status();
        const live = await app.liveRuns();
        const lines = [
          'Doctor',
          `  ok    provider: ${app.provider.name}/${app.provider.model}`,
          `  ok    core: ${app.core.id} (${app.coreDir})`,
          `  ok    workspace: ${app.workspace}`,
          `  ok    store: ${app.home}/runtime/runtime.sqlite3`,
          `  info  live runs: ${live.length}`,
          `  info  work: ${JSON.stringify(work)}`,
        ];
        this.output('doctor', lines.join('\n'));
        return true;
      }
      default:
        if (NOT_HERE.has(name)) this.notice(`/${name} is not available in this runtime`, 'warning');
        else this.notice(`unknown command: /${name}`, 'warning');
        return false;
    }
  }

  private async task(taskId: string): Promise<TaskView | undefined> {
    return this.app.store.projection('task-board').get<TaskView>('tasks', taskId);
  }

  // ---- output

  private emit(event: string, payload: Record<string, unknown>): void {
    if (this.closed && event !== 'operator.shutdown') return;
    this.open.emit(event, payload);
  }

  private output(command: string, text: string): void {
    this.emit('operator.deliver', {
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
    });
  }

  private notice(text: string, level: 'info' | 'warning' | 'error' = 'info'): void {
    this.emit('operator.deliver', {
      channel: 'tui',
      deliveries: [{ type: 'text', kind: 'notice', text, fallback_text: text, visible: true, metadata: { level } }],
    });
  }

  private fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.lastError = message;
    this.notice(message, 'error');
  }
}

function workItem(task: TaskView): Record<string, unknown> {
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

function preview(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = typeof value === 'string' && value.length > 200 ? `${value.slice(0, 200)}…` : value;
  }
  return out;
}
