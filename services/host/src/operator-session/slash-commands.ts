import type { McpServerStatusEntry } from '@demiurge/operator';
import type { TaskView } from '@demiurge/projector-task-board';
import { NothingToCompactError } from '@demiurge/turn-engine';
import type { DemiurgeApp } from '../app.js';
import { describeStore } from '../store/host-store.js';
import { runCoreCommand } from './core-commands.js';

/** A slash command of the session dialect, listed in `operator.ready` (`slash_commands`). */
export interface SlashSpec {
  readonly name: string;
  readonly description: string;
  readonly group: string;
  readonly usage: string | null;
}

export const SLASH_COMMANDS: readonly SlashSpec[] = [
  { name: 'help', description: 'list the commands', group: 'general', usage: null },
  { name: 'status', description: 'the session and host status', group: 'general', usage: null },
  { name: 'tasks', description: "the session's detached tasks", group: 'tasks', usage: null },
  { name: 'task', description: 'one task: status, output tail', group: 'tasks', usage: '/task ID' },
  { name: 'cancel', description: 'cancel a task, or the running turn', group: 'tasks', usage: '/cancel [TASK_ID]' },
  { name: 'interrupt', description: 'interrupt the running turn', group: 'tasks', usage: null },
  { name: 'plan', description: 'plan mode: mutating tools need an approval', group: 'session', usage: '/plan on|off' },
  {
    name: 'compact',
    description: "summarize the older messages for the model's view (the transcript keeps them)",
    group: 'session',
    usage: null,
  },
  { name: 'approvals', description: 'open approvals of this session', group: 'session', usage: null },
  { name: 'sessions', description: 'recent sessions', group: 'session', usage: '/sessions [N]' },
  { name: 'new', description: 'start a new session', group: 'session', usage: null },
  { name: 'resume', description: 'continue another session', group: 'session', usage: '/resume [ID]' },
  { name: 'history', description: "show this session's history again", group: 'session', usage: null },
  { name: 'core', description: "the Agent Core's current revision", group: 'core', usage: null },
  { name: 'versions', description: "the Agent Core's revisions", group: 'core', usage: null },
  {
    name: 'evolve',
    description: 'an evolve task: a child agent changes the core',
    group: 'core',
    usage: '/evolve GOAL',
  },
  { name: 'rollback', description: 'make an older core revision current', group: 'core', usage: '/rollback REV' },
  { name: 'doctor', description: 'check the host', group: 'general', usage: null },
  { name: 'exit', description: 'leave', group: 'general', usage: null },
  { name: 'quit', description: 'leave', group: 'general', usage: null },
];

/** Commands of the original that this runtime does not have (yet): answered `{ handled: false }` with a notice. */
const NOT_HERE = new Set(['packages', 'skills', 'skill']);

/** What a slash command may do on its connection. */
export interface SlashContext {
  readonly app: DemiurgeApp;
  sessionId(): string;
  snapshot(): Promise<Record<string, unknown>>;
  /** A task of the log (any session's), or undefined. */
  task(taskId: string): Promise<TaskView | undefined>;
  interrupt(reason: string): Promise<void>;
  output(command: string, text: string): void;
  notice(text: string, level?: 'info' | 'warning' | 'error'): void;
  /** Creates a session and binds the connection to it. */
  startNewSession(): Promise<string>;
  emitHistory(): Promise<void>;
  resumeSession(sessionId: string): Promise<void>;
  /** Registers a pending prompt with these choices; returns its id (the caller emits it). */
  openPrompt(choices: string[]): string;
  emit(event: string, payload: Record<string, unknown>): void;
}

/** Runs one slash command (not `/exit`, which the connection handles); false when it is not one of ours. */
export async function runSlashCommand(ctx: SlashContext, name: string, args: string): Promise<boolean> {
  const { app } = ctx;
  const sessionId = ctx.sessionId();
  switch (name) {
    case 'help':
      ctx.output(
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
      const s = await ctx.snapshot();
      const keys = ['session_id', 'status', 'mode', 'provider', 'model', 'workspace', 'core_id', 'busy_mode'];
      const more = ['message_count', 'background_tasks', 'pending_approvals', 'queued_inputs', 'last_error'];
      const mcp = ((s.mcp_servers ?? []) as McpServerStatusEntry[]).map(
        (m) =>
          `  mcp ${m.server}: ${m.state}, ${m.tools} tools, ${m.crashes} crashes${m.last_reason ? ` (${m.last_reason})` : ''}`,
      );
      ctx.output(
        'status',
        ['Status', ...[...keys, ...more].map((k) => `  ${k}: ${String(s[k] ?? '')}`), ...mcp].join('\n'),
      );
      return true;
    }
    case 'tasks': {
      const tasks = await app.runtime.controlPlane.listTasks(sessionId);
      ctx.output(
        'tasks',
        tasks.length === 0
          ? 'no tasks in this session'
          : ['Tasks', ...tasks.map((t) => `  ${t.taskId}  ${t.kind}  ${t.status}  ${t.title}`)].join('\n'),
      );
      return true;
    }
    case 'task': {
      if (!args) {
        ctx.output('task', 'usage: /task ID');
        return true;
      }
      const task = await ctx.task(args);
      if (!task || task.sessionId !== sessionId) {
        ctx.notice(`task ${args} not found in this session`, 'error');
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
      ctx.output('task', lines.join('\n'));
      return true;
    }
    case 'cancel': {
      if (!args) {
        await ctx.interrupt('/cancel');
        return true;
      }
      const task = await ctx.task(args);
      if (!task || task.sessionId !== sessionId) {
        ctx.notice(`task ${args} not found in this session`, 'error');
        return true;
      }
      await app.cancelTask({ sessionId, taskId: task.taskId }, 'cancelled in the TUI');
      ctx.output('cancel', `cancel requested: ${task.taskId}`);
      return true;
    }
    case 'interrupt':
      await ctx.interrupt('/interrupt');
      return true;
    case 'plan':
      return plan(ctx, args.toLowerCase());
    case 'compact':
      return compact(ctx);
    case 'approvals': {
      const open = await app.runtime.approvals.listOpen(sessionId);
      ctx.output(
        'approvals',
        open.length === 0
          ? 'no open approvals'
          : ['Approvals', ...open.map((a) => `  ${a.approvalId}  ${a.tool ?? a.action}  ${a.reason}`)].join('\n'),
      );
      return true;
    }
    case 'sessions': {
      const sessions = await recentSessions(app, /^\d+$/.test(args) ? Number(args) : 20);
      ctx.output(
        'sessions',
        [
          'Sessions',
          ...sessions.map(
            (s) =>
              `${s.sessionId === sessionId ? '*' : ' '} ${s.sessionId}  ${s.updatedAt}  ${s.messageCount} msgs  ${s.title}`,
          ),
        ].join('\n'),
      );
      return true;
    }
    case 'new': {
      const created = await ctx.startNewSession();
      await ctx.emitHistory();
      ctx.notice(`new session: ${created}`);
      return true;
    }
    case 'resume':
      return resume(ctx, args);
    case 'history':
      await ctx.emitHistory();
      return true;
    case 'doctor': {
      const work = await app.runtime.host.status();
      const live = await app.liveRuns();
      const lines = [
        'Doctor',
        `  ok    provider: ${app.provider.name}/${app.provider.model}`,
        `  ok    core: ${app.core.id} (${app.coreDir})`,
        `  ok    workspace: ${app.workspace}`,
        `  ok    store: ${describeStore(app.store)}`,
        `  info  live runs: ${live.length}`,
        `  info  work: ${JSON.stringify(work)}`,
      ];
      ctx.output('doctor', lines.join('\n'));
      return true;
    }
    default:
      if (await runCoreCommand(ctx, name, args)) return true;
      if (NOT_HERE.has(name)) ctx.notice(`/${name} is not available in this runtime`, 'warning');
      else ctx.notice(`unknown command: /${name}`, 'warning');
      return false;
  }
}

async function plan(ctx: SlashContext, arg: string): Promise<boolean> {
  const sessions = ctx.app.runtime.sessions;
  if (arg === '') {
    const session = await sessions.get(ctx.sessionId());
    ctx.output('plan', `plan mode: ${session.mode === 'plan' ? 'on' : 'off'}`);
    return true;
  }
  if (!['on', 'off'].includes(arg)) {
    ctx.output('plan', 'usage: /plan on|off');
    return true;
  }
  await sessions.setMode(ctx.sessionId(), arg === 'on' ? 'plan' : 'default');
  ctx.output('plan', `plan mode: ${arg}`);
  return true;
}

async function compact(ctx: SlashContext): Promise<boolean> {
  try {
    const r = await ctx.app.runtime.engine.compact(ctx.sessionId());
    ctx.output(
      'compact',
      `compacted (${r.compactionId}): ${r.messageCount} messages summarized for the model; ` +
        `~${r.tokens.before} -> ~${r.tokens.after} tokens of ${r.tokens.window}. The transcript keeps every message.`,
    );
  } catch (err) {
    if (!(err instanceof NothingToCompactError)) throw err;
    ctx.notice(err.message, 'warning');
  }
  return true;
}

async function resume(ctx: SlashContext, args: string): Promise<boolean> {
  if (args) {
    try {
      await ctx.app.runtime.sessions.get(args);
    } catch {
      ctx.notice('session not found', 'error');
      return true;
    }
    await ctx.resumeSession(args);
    return true;
  }
  const sessions = await recentSessions(ctx.app, 20);
  const choices = sessions.map((s) => s.sessionId);
  const promptId = ctx.openPrompt(choices);
  ctx.emit('operator.prompt.opened', {
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

async function recentSessions(app: DemiurgeApp, limit: number) {
  return (await app.runtime.sessions.list()).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt)).slice(0, limit);
}
