import { z } from 'zod';
import { cancelledError, FakeScriptError } from './errors.js';
import type { ChatMessage, CompletionChunk, CompletionRequest, ModelProvider, ToolCallRequest } from './provider.js';

/** One scripted assistant answer: text, tool calls, or both (text streams first). */
export const FakeStep = z
  .strictObject({
    /**
     * Which conversation the step belongs to: played only for a transcript whose first user message
     * contains this text (e.g. a delegated child's goal). Steps without it form the main conversation.
     */
    match: z.string().min(1).optional(),
    content: z.string().optional(),
    tool_calls: z
      .array(
        z.strictObject({
          name: z.string().min(1, 'a tool call needs a name'),
          arguments: z.record(z.string(), z.unknown()).default({}),
        }),
      )
      .optional(),
  })
  .refine((step) => step.content !== undefined || step.tool_calls !== undefined, {
    message: 'a step needs content, tool_calls or both',
  });
export type FakeStep = z.input<typeof FakeStep>;

/** A fake script: the assistant answers, in order. */
export const FakeScript = z.array(FakeStep);

export interface FakeProviderOptions {
  /** The answers to play, in order. Absent or exhausted: the fake echoes the last user message. */
  readonly script?: readonly FakeStep[] | undefined;
  /** Defaults to `fake-1`. */
  readonly model?: string | undefined;
}

/**
 * A deterministic provider for tests, demos and offline runs. Which step it plays is derived from the
 * request alone: step `n` answers a transcript holding `n` assistant messages. So the same messages always
 * get the same answer, in a fresh process too (recovery continues where the conversation is).
 * Past the end of the script it answers `[fake] <last user message>`.
 *
 * A script can hold several conversations: steps with `match: <text>` are played, in their own order, only
 * for a transcript whose first user message contains that text (a delegated child's session starts with its
 * goal); the steps without `match` answer every other transcript. The first matching text wins.
 *
 * Tool call ids are `call_<step>_<i>`; usage counts one token per 4 characters, rounded up.
 *
 * A compacted context counts as answered: the leading system message's `compacted.assistantMessages` are added to
 * the step. A `purpose: 'compaction'` request is answered, never from the script, with {@link fakeSummary}.
 *
 * @example
 * ```ts
 * const provider = createFakeProvider({ script: [{ tool_calls: [{ name: 'ls', arguments: {} }] }, { content: 'done' }] });
 * ```
 */
export function createFakeProvider(options: FakeProviderOptions = {}): ModelProvider {
  const parsed = FakeScript.safeParse(options.script ?? []);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FakeScriptError('(inline script)', issue?.path ?? [], issue?.message ?? 'invalid');
  }
  const script = parsed.data;
  const model = options.model ?? 'fake-1';
  return {
    name: 'fake',
    model,
    complete: (request) => play(script, request),
  };
}

type Step = z.output<typeof FakeStep>;

async function* play(script: readonly Step[], request: CompletionRequest): AsyncGenerator<CompletionChunk> {
  const { signal } = request;
  const checkSignal = (): void => {
    if (signal?.aborted) throw cancelledError('fake', signal.reason);
  };
  checkSignal();
  const lead = request.messages[0];
  const compacted = lead?.role === 'system' ? (lead.compacted?.assistantMessages ?? 0) : 0;
  const stepIndex = request.messages.filter((m) => m.role === 'assistant').length + compacted;
  const step: Step =
    request.purpose === 'compaction'
      ? { content: fakeSummary(request.messages) }
      : (conversationOf(script, request.messages)[stepIndex] ?? {
          content: `[fake] ${lastUserText(request.messages)}`,
        });

  const content = step.content ?? '';
  for (const piece of splitWords(content)) {
    checkSignal();
    yield { type: 'text', text: piece };
  }
  const calls: ToolCallRequest[] = (step.tool_calls ?? []).map((call, i) => ({
    id: `call_${stepIndex}_${i}`,
    name: call.name,
    arguments: call.arguments,
  }));
  for (const call of calls) {
    checkSignal();
    yield { type: 'tool_call', call };
  }
  checkSignal();
  const outputChars = content.length + calls.reduce((n, c) => n + c.name.length + argChars(c.arguments), 0);
  yield {
    type: 'done',
    usage: { inputTokens: tokens(inputChars(request)), outputTokens: tokens(outputChars) },
    finishReason: calls.length > 0 ? 'tool_calls' : 'stop',
  };
}

const SUMMARY_ITEM = 60;
const SUMMARY_MAX = 1_200;

/**
 * The fake's summary of a compaction request (deterministic): `[fake summary] ` then, from its last user message,
 * the earlier summary's requests (the text after `requests:`) and every `user: ` line, each cut to 60 characters,
 * joined by ` | `, the whole cut to 1 200 characters (the oldest requests dropped first).
 * @example
 * fakeSummary([{ role: 'user', content: 'user: hi\nassistant: hello' }]); // '[fake summary] requests: hi'
 */
export function fakeSummary(messages: readonly ChatMessage[]): string {
  const text = lastUserText(messages);
  const items: string[] = [];
  const earlier = /\[fake summary\] requests: ([^\n]*)/.exec(text)?.[1];
  if (earlier) items.push(...earlier.split(' | '));
  for (const line of text.split('\n')) {
    if (line.startsWith('user: ')) items.push(line.slice(6).replace(/\s+/g, ' ').trim().slice(0, SUMMARY_ITEM));
  }
  let joined = items.filter((i) => i !== '').join(' | ');
  while (joined.length > SUMMARY_MAX && items.length > 1) {
    items.shift();
    joined = items.join(' | ');
  }
  return `[fake summary] requests: ${joined.slice(-SUMMARY_MAX) || '(none)'}`;
}

/** The steps that answer this transcript: those whose `match` its first user message contains, else the unmatched. */
function conversationOf(script: readonly Step[], messages: readonly ChatMessage[]): Step[] {
  const first = messages.find((m) => m.role === 'user')?.content ?? '';
  const match = script.find((s) => s.match !== undefined && first.includes(s.match))?.match;
  return script.filter((s) => s.match === match);
}

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return message.content;
  }
  return '';
}

/** Splits before every word that follows whitespace, so the pieces concatenate to the text. */
function splitWords(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

function inputChars(request: CompletionRequest): number {
  let n = 0;
  for (const message of request.messages) {
    n += message.content.length;
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) n += call.name.length + argChars(call.arguments);
    }
  }
  for (const tool of request.tools) n += tool.name.length + tool.description.length;
  return n;
}

function argChars(args: unknown): number {
  return (JSON.stringify(args) ?? '').length;
}

function tokens(chars: number): number {
  return Math.ceil(chars / 4);
}
