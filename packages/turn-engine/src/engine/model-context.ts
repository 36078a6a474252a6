import { type CompactionView, sessionsReader, type TranscriptEntry } from '@demiurge/projector-sessions';
import { taskBoardReader } from '@demiurge/projector-task-board';
import type { ChatMessage } from '@demiurge/providers';
import { type TurnRecord, toolResultText } from '../turn-state.js';
import type { EngineDeps } from './options.js';

/** The part of a compaction the model's view needs: its summary and the last message it covers. */
export type AppliedCompaction = Pick<CompactionView, 'summary' | 'throughMessageId' | 'messageCount'>;

/** The session's latest compaction (the one the model's view starts from), if any. */
export async function latestCompaction(deps: EngineDeps, sessionId: string): Promise<CompactionView | undefined> {
  return (await sessionsReader(deps.store).compactions(sessionId)).at(-1);
}

/**
 * The session's history as the model sees it before `turn`: the kept messages (history policy `persist`) not
 * of the turn itself, and, after a compaction, only those after its range (with how many assistant messages
 * the range replaced).
 */
export async function historyForModel(
  deps: EngineDeps,
  turn: TurnRecord,
  compaction: AppliedCompaction | undefined,
): Promise<{
  readonly before: TranscriptEntry[];
  readonly entries: TranscriptEntry[];
  readonly own: TranscriptEntry[];
}> {
  const all = await deps.sessions.history(turn.sessionId!, { forModel: true });
  const own = all.filter((e) => e.turnId === turn.streamId);
  const others = all.filter((e) => e.turnId !== turn.streamId);
  if (!compaction) return { before: [], entries: others, own };
  const through = others.findIndex((e) => e.messageId === compaction.throughMessageId);
  return { before: others.slice(0, through + 1), entries: others.slice(through + 1), own };
}

/**
 * What the model is sent. All system content — the core's instructions, system messages of the history (fork
 * context, slot context kept in history), this turn's system context, and after a compaction its summary and the
 * pinned context — is merged, in that order, into one leading system message: servers with strict chat templates
 * refuse a system message anywhere but first. The rest keeps its order: history (after the compacted range),
 * this turn's user context, the input, the model rounds.
 *
 * `compaction` overrides the session's latest one (to estimate the context a compaction would leave).
 */
export async function transcript(
  deps: EngineDeps,
  turn: TurnRecord,
  compaction: AppliedCompaction | undefined | 'latest' = 'latest',
): Promise<ChatMessage[]> {
  const applied = compaction === 'latest' ? await latestCompaction(deps, turn.sessionId!) : compaction;
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  if (deps.instructions) system.push(deps.instructions);
  const { before, entries, own } = await historyForModel(deps, turn, applied);
  const input = own.find((e) => e.messageId === turn.inputMessageId)?.text;
  for (const entry of entries) {
    if (entry.role === 'system') system.push(entry.text);
    else if (entry.role === 'user') messages.push({ role: 'user', content: entry.text });
    else if (entry.role === 'assistant') messages.push({ role: 'assistant', content: entry.text });
  }
  for (const c of turn.context) {
    if (c.role === 'system') system.push(c.text);
    else messages.push({ role: c.role, content: c.text });
  }
  if (input !== undefined) messages.push({ role: 'user', content: input });
  if (applied) {
    system.push(
      `Summary of the earlier conversation (${applied.messageCount} messages compacted; the transcript keeps them):\n${applied.summary}`,
    );
    system.push(await pinnedContext(deps, turn.sessionId!));
  }
  if (system.length > 0) {
    const assistantMessages = before.filter((e) => e.role === 'assistant').length;
    messages.unshift({
      role: 'system',
      content: system.join('\n\n'),
      ...(applied ? { compacted: { assistantMessages } } : {}),
    });
  }
  for (const step of turn.steps) {
    messages.push({
      role: 'assistant',
      content: step.content,
      toolCalls: step.calls.map((c) => ({
        id: c.callId,
        name: c.name,
        arguments: c.arguments,
        ...(c.argumentsError !== null ? { argumentsError: c.argumentsError } : {}),
      })),
    });
    for (const call of step.calls) {
      messages.push({ role: 'tool', toolCallId: call.callId, name: call.name, content: toolResultText(call) });
    }
  }
  return messages;
}

/** Run states after which an approval the run asked for answers nothing (its call will not run). */
const ENDED_RUN: ReadonlySet<string> = new Set(['cancelled', 'completed', 'failed', 'archived']);

/** The most characters of a pending call's arguments the pinned context shows. */
const PINNED_ARGUMENTS_CHARS = 200;

/**
 * What a compacted context restates from the read models, so a summary cannot lose it: plan mode, the session's
 * open detached tasks and its pending approvals (requested and not expired, or granted and not used yet, of a run
 * that has not ended: the call, its arguments, why it needs one and how an operator answers). (Pending completions and the core's input context
 * are this turn's context, recorded on `turn.started`: they are sent after it as before.)
 *
 * A pending approval shows here for a turn admitted while another turn of the session waits for it: the turn that
 * asked holds the session in its own process until it is answered, so such a turn comes from another process
 * (another CLI host on the same home, or another host on a shared store).
 */
export async function pinnedContext(deps: EngineDeps, sessionId: string): Promise<string> {
  const [session, board, approvals] = await Promise.all([
    deps.sessions.get(sessionId),
    taskBoardReader(deps.store).board(sessionId),
    deps.approvals.listOpen(sessionId),
  ]);
  const open = board.filter((t) => t.lane !== 'done');
  const now = deps.clock.now();
  const runEnded = async (runId: string | null) => runId !== null && ENDED_RUN.has((await deps.runs.load(runId)).state);
  const answerable = await Promise.all(
    approvals.map(async (a) => (!a.expiresAt || Date.parse(a.expiresAt) > now) && !(await runEnded(a.runId))),
  );
  const pending = approvals.filter((_, i) => answerable[i]);
  const approval = (a: (typeof pending)[number]) => {
    const args = JSON.stringify(a.arguments ?? {});
    const shown = args.length > PINNED_ARGUMENTS_CHARS ? `${args.slice(0, PINNED_ARGUMENTS_CHARS)}...` : args;
    const state =
      a.status === 'granted'
        ? 'granted, not used yet'
        : `waiting for an operator: demiurge approvals grant ${a.approvalId} (or deny)`;
    return `  - ${a.approvalId} ${a.tool ?? a.action} ${shown}: ${a.reason} [${state}]`;
  };
  return [
    'Pinned context (kept across compaction):',
    `- plan mode: ${session.mode === 'plan' ? 'on (mutating tools need an approval)' : 'off'}`,
    open.length === 0
      ? '- open tasks: none'
      : `- open tasks:\n${open.map((t) => `  - ${t.taskId} ${t.kind} [${t.status}] ${t.title}`).join('\n')}`,
    pending.length === 0 ? '- pending approvals: none' : `- pending approvals:\n${pending.map(approval).join('\n')}`,
  ].join('\n');
}
