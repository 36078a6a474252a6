import { type Actor, DemiurgeError, ErrorCode, type NewEvent } from '@demiurge/contracts';
import type { AppendStream } from '@demiurge/event-store';
import type { SessionEventType } from '@demiurge/lifecycle';
import type { TranscriptEntry } from '@demiurge/projector-sessions';
import {
  type ChatMessage,
  collectCompletion,
  contextWindowFor,
  estimateTokens,
  ProviderError,
  type ToolSpec,
} from '@demiurge/providers';
import { initialTurn, type TurnRecord } from '../turn-state.js';
import { checkpoint, type TurnExecution } from './execution.js';
import { type AppliedCompaction, latestCompaction, transcript } from './model-context.js';
import type { EngineDeps } from './options.js';

/** The share of the context window a request may reach before the session is compacted first. */
export const DEFAULT_COMPACT_AT = 0.8;
/** The most recent kept messages a compaction leaves as they are. */
export const DEFAULT_KEEP_MESSAGES = 4;

/** The instructions of a compaction request (the system message). */
export const COMPACTION_INSTRUCTIONS =
  'You compact a conversation between a user and an AI agent so it can go on within a limited context. ' +
  'Write a concise summary of the conversation below for the agent itself: the user requests and decisions, ' +
  'facts learned, files and commands involved, what was done and what is still open. Keep ids, names and ' +
  'numbers exactly. Write only the summary.';

/** A manual compaction found nothing to compact (the session is shorter than the messages always kept). */
export class NothingToCompactError extends DemiurgeError {
  override readonly name = 'NothingToCompactError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly sessionId: string,
    readonly reason: string,
  ) {
    super(`nothing to compact in session ${sessionId}: ${reason}`);
  }
}

/** What a compaction recorded. */
export interface CompactionResult {
  readonly sessionId: string;
  readonly compactionId: string;
  readonly trigger: 'auto' | 'manual';
  readonly summary: string;
  readonly messageCount: number;
  readonly throughMessageId: string;
  readonly tokens: { readonly before: number; readonly after: number; readonly window: number };
}

/** The window and threshold the engine compacts by. */
export function windowOf(deps: EngineDeps): { window: number; threshold: number } {
  const window = deps.provider.contextWindow ?? contextWindowFor(deps.provider.model);
  return { window, threshold: Math.floor(window * (deps.compaction?.threshold ?? DEFAULT_COMPACT_AT)) };
}

/**
 * Before a model round: when the request (estimated, `estimateTokens`) would pass the threshold of the window,
 * compacts the session first as a step of the run: the model writes the summary, then one commit records
 * `session.compacted` with a run checkpoint (stage `compaction`), fenced by the run lease. A crash before the
 * commit leaves the session as it was (the next owner compacts again); after it, the session is compacted and
 * the request is rebuilt from the log. True when it compacted.
 */
export async function compactIfNeeded(
  deps: EngineDeps,
  exec: TurnExecution,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
): Promise<boolean> {
  if (deps.compaction?.enabled === false) return false;
  const { window, threshold } = windowOf(deps);
  const before = estimateTokens({ messages, tools });
  if (before <= threshold) return false;
  // The kept messages too, when nothing older is left and the request still passes the threshold.
  const plan = (await planCompaction(deps, exec.turn)) ?? (await planCompaction(deps, exec.turn, 0));
  if (!plan) {
    deps.logger.warn('the request passes the compaction threshold but nothing older is left to compact', {
      runId: exec.runId,
      error: new Error(`${before} estimated tokens, threshold ${threshold} of ${window}`),
    });
    return false;
  }
  const written = await writeSummary(deps, plan, exec.signal);
  const after = estimateTokens({ messages: await transcript(deps, exec.turn, written), tools });
  const event = compactedEvent(deps, plan, written, { before, after, window }, 'auto', exec);
  await exec.write(async () => ({
    run: [checkpoint(exec.runId, `${exec.turnId}/${plan.compactionId}`, 'compaction')],
    also: [await deps.sessions.sessionStream(exec.sessionId, [event])],
  }));
  return true;
}

/**
 * A manual compaction (`demiurge sessions compact`, `/compact`), between turns: the older messages (all but the
 * last {@link DEFAULT_KEEP_MESSAGES}) are summarized by the model and `session.compacted` is committed in one
 * append on the session stream. Throws {@link NothingToCompactError} when nothing older is left.
 */
export async function compactSessionNow(
  deps: EngineDeps,
  sessionId: string,
  options: { actor?: Actor; signal?: AbortSignal } = {},
): Promise<CompactionResult> {
  // The session's context between turns: no turn of its own (no input, no rounds).
  const turn: TurnRecord = { ...initialTurn('trn_between_turns'), sessionId };
  const plan = await planCompaction(deps, turn);
  if (!plan) {
    const keep = deps.compaction?.keepMessages ?? DEFAULT_KEEP_MESSAGES;
    throw new NothingToCompactError(sessionId, `the last ${keep} messages are always kept, and nothing older is`);
  }
  const tools = deps.tools.specs();
  const { window } = windowOf(deps);
  const before = estimateTokens({ messages: await transcript(deps, turn), tools });
  const written = await writeSummary(deps, plan, options.signal);
  const after = estimateTokens({ messages: await transcript(deps, turn, written), tools });
  const tokens = { before, after, window };
  const event = compactedEvent(deps, plan, written, tokens, 'manual');
  const stream: AppendStream = await deps.sessions.sessionStream(sessionId, [event]);
  await deps.store.append(stream, {
    meta: { actor: options.actor ?? { kind: 'system', id: 'compaction' }, sessionId },
  });
  return resultOf(plan, written, tokens, 'manual');
}

interface CompactionPlan {
  readonly sessionId: string;
  readonly compactionId: string;
  readonly previous: AppliedCompaction | undefined;
  readonly fromMessageId: string;
  readonly covered: readonly TranscriptEntry[];
  readonly messageCount: number;
}

/** Which messages a compaction covers: those after the previous compaction but the last `keepMessages`. */
async function planCompaction(
  deps: EngineDeps,
  turn: TurnRecord,
  keep = deps.compaction?.keepMessages ?? DEFAULT_KEEP_MESSAGES,
): Promise<CompactionPlan | undefined> {
  const sessionId = turn.sessionId!;
  const previous = await latestCompaction(deps, sessionId);
  const n = previous ? Number(/^cmp_(\d+)$/.exec(previous.compactionId)?.[1] ?? 0) + 1 : 1;
  const history = (await deps.sessions.history(sessionId, { forModel: true })).filter(
    (e) => e.turnId !== turn.streamId,
  );
  const after = previous
    ? history.slice(history.findIndex((e) => e.messageId === previous.throughMessageId) + 1)
    : history;
  const covered = after.slice(0, Math.max(0, after.length - keep));
  const first = previous?.fromMessageId ?? covered[0]?.messageId;
  if (covered.length === 0 || first === undefined) return undefined;
  return {
    sessionId,
    compactionId: `cmp_${n}`,
    previous,
    fromMessageId: first,
    covered,
    messageCount: (previous?.messageCount ?? 0) + covered.length,
  };
}

/** Asks the model for the summary of the covered messages (and the previous summary). */
async function writeSummary(
  deps: EngineDeps,
  plan: CompactionPlan,
  signal: AbortSignal | undefined,
): Promise<AppliedCompaction & { usage: { inputTokens: number; outputTokens: number } }> {
  const lines = plan.covered.map((e) => `${e.role}: ${e.text}`);
  const text = [
    ...(plan.previous ? [`Earlier summary:\n${plan.previous.summary}`, ''] : []),
    'Conversation:',
    ...lines,
  ].join('\n');
  const completion = await collectCompletion(
    deps.provider.complete({
      messages: [
        { role: 'system', content: COMPACTION_INSTRUCTIONS },
        { role: 'user', content: text },
      ],
      tools: [],
      purpose: 'compaction',
      ...(signal ? { signal } : {}),
    }),
  );
  const summary = completion.content.trim();
  if (summary === '') {
    throw new ProviderError({
      code: ErrorCode.ProviderProtocol,
      provider: deps.provider.name,
      detail: 'the model answered the compaction request with no summary',
      retryable: true,
    });
  }
  return {
    summary,
    throughMessageId: plan.covered.at(-1)!.messageId,
    messageCount: plan.messageCount,
    usage: completion.usage,
  };
}

function compactedEvent(
  deps: EngineDeps,
  plan: CompactionPlan,
  written: AppliedCompaction & { usage: { inputTokens: number; outputTokens: number } },
  tokens: { before: number; after: number; window: number },
  trigger: 'auto' | 'manual',
  exec?: TurnExecution,
): NewEvent<SessionEventType> {
  return {
    type: 'session.compacted',
    data: {
      sessionId: plan.sessionId,
      compactionId: plan.compactionId,
      trigger,
      summary: written.summary,
      range: {
        fromMessageId: plan.fromMessageId,
        throughMessageId: written.throughMessageId,
        messageCount: plan.messageCount,
      },
      ...(exec ? { turnId: exec.turnId, runId: exec.runId } : {}),
      provider: deps.provider.name,
      model: deps.provider.model,
      tokens,
      usage: written.usage,
    },
  };
}

function resultOf(
  plan: CompactionPlan,
  written: AppliedCompaction,
  tokens: CompactionResult['tokens'],
  trigger: 'auto' | 'manual',
): CompactionResult {
  return {
    sessionId: plan.sessionId,
    compactionId: plan.compactionId,
    trigger,
    summary: written.summary,
    messageCount: plan.messageCount,
    throughMessageId: written.throughMessageId,
    tokens,
  };
}
