import type { OperatorSession, SessionApprovalDecision, SessionOpen } from '@demiurge/operator';
import { type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { merge, type Subscription } from 'rxjs';
import type { DemiurgeApp } from '../app.js';
import { SessionEventRelay, type ToolDisplay } from './event-relay.js';
import { historyFrame, noticeFrame, outputFrame, workItem } from './frames.js';
import { runSlashCommand, type SlashContext } from './slash-commands.js';
import { readyPayload, sessionSnapshot } from './snapshot.js';

/**
 * Settings of session-bound (original-protocol) connections, as the original client passes them in
 * `DEMIURGE_TUI_GATEWAY_CONFIG`: the session to continue, how a second input is handled, how tool calls show.
 */
export interface SessionGatewayOptions {
  /** Continue this session (`session` or `resume` of the config); default: a new session per connection. */
  readonly sessionId?: string;
  readonly busyMode?: 'interrupt' | 'queue';
  readonly toolDisplay?: ToolDisplay;
  readonly timezone?: string;
  /** `operator.shutdown` or `/exit`: the gateway process should end with code 0. */
  readonly onExit?: () => void;
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
  private readonly prompts = new Map<string, { kind: 'resume'; choices: string[] }>();
  private promptCounter = 0;
  private busyMode: 'interrupt' | 'queue';
  private readonly toolDisplay: ToolDisplay;
  private readonly relay: SessionEventRelay;

  constructor(
    private readonly app: DemiurgeApp,
    private readonly open: SessionOpen,
    private readonly options: SessionGatewayOptions,
  ) {
    this.busyMode = options.busyMode ?? 'interrupt';
    this.toolDisplay = options.toolDisplay ?? 'summary';
    this.relay = new SessionEventRelay({
      sessionId: () => this.sessionId,
      toolDisplay: this.toolDisplay,
      emit: (event, payload) => this.emit(event, payload),
      statusChanged: () => void this.emitStatus(),
      taskChanged: (taskId) => void this.emitTask(taskId),
    });
    this.subscription = merge(app.store.events$, app.pushes$).subscribe((e) => {
      if (this.closed || this.sessionId === '') return;
      try {
        if ('event' in e) this.relay.onPush(e.payload);
        else this.relay.onStoreEvent(e);
      } catch (error) {
        app.logger.error(`operator session: ${(error as Error).message}`);
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
      this.emit('operator.ready', readyPayload(await this.snapshot()));
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
    try {
      if (name === 'exit' || name === 'quit') {
        await this.shutdown();
        return { handled: true, exit: true };
      }
      handled = await runSlashCommand(this.slashContext(), name, args);
    } catch (error) {
      this.notice(`/${name} failed: ${(error as Error).message}`, 'error');
    }
    const exit = this.closed;
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

  private slashContext(): SlashContext {
    return {
      app: this.app,
      sessionId: () => this.sessionId,
      snapshot: () => this.snapshot(),
      task: (taskId) => this.task(taskId),
      interrupt: async (reason) => void (await this.interrupt({ reason })),
      output: (command, text) => this.emit('operator.deliver', outputFrame(command, text)),
      notice: (text, level) => this.notice(text, level),
      startNewSession: async () => {
        const session = await this.newSession();
        await this.bind(session.sessionId);
        return session.sessionId;
      },
      emitHistory: () => this.emitHistory(),
      resumeSession: (sessionId) => this.resumeSession(sessionId),
      openPrompt: (choices) => {
        const promptId = `prompt_${++this.promptCounter}`;
        this.prompts.set(promptId, { kind: 'resume', choices });
        return promptId;
      },
      emit: (event, payload) => this.emit(event, payload),
    };
  }

  // ---- output

  private snapshot(): Promise<Record<string, unknown>> {
    return sessionSnapshot(this.app, {
      sessionId: this.sessionId,
      activeTurns: this.active.size,
      timezone: this.options.timezone,
      toolDisplay: this.toolDisplay,
      busyMode: this.busyMode,
      queuedInputs: this.queue.length,
      pendingPrompts: this.prompts.size,
      lastError: this.lastError,
    });
  }

  private async task(taskId: string): Promise<TaskView | undefined> {
    return taskBoardReader(this.app.store).get(taskId);
  }

  private async emitTask(taskId: string): Promise<void> {
    const task = await this.task(taskId);
    if (!task || task.sessionId !== this.sessionId) return;
    this.emit('operator.work.updated', workItem(task));
    await this.emitStatus();
  }

  private async emitHistory(): Promise<void> {
    const messages = await this.app.runtime.sessions.history(this.sessionId);
    this.emit('operator.history', historyFrame(this.sessionId, messages));
  }

  private async emitStatus(): Promise<void> {
    if (this.closed) return;
    try {
      this.emit('operator.status', await this.snapshot());
    } catch (error) {
      this.fail(error);
    }
  }

  private emit(event: string, payload: Record<string, unknown>): void {
    if (this.closed && event !== 'operator.shutdown') return;
    this.open.emit(event, payload);
  }

  private notice(text: string, level: 'info' | 'warning' | 'error' = 'info'): void {
    this.emit('operator.deliver', noticeFrame(text, level));
  }

  private fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.lastError = message;
    this.notice(message, 'error');
  }
}
