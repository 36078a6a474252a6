import type { CompletionChunk, CompletionRequest, ModelProvider } from '@demiurge/providers';
import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, TraceFlags, type Tracer, trace } from '@opentelemetry/api';
import { traceRoot } from './trace-ids.js';

/**
 * `provider` with a span per model request (`demiurge.model_request`): a child of its turn's span (the turn the
 * request's `labels` name), with the provider and model, the token counts of the answer, and the retries the
 * provider made (`demiurge.retries`, and an event per retry). A failed request's span is an ERROR with the
 * provider's error. Timed live, around the provider call: no event marks a request's start in the log.
 */
export function traceModelRequests(provider: ModelProvider, tracer: Tracer): ModelProvider {
  return {
    name: provider.name,
    model: provider.model,
    ...(provider.contextWindow !== undefined ? { contextWindow: provider.contextWindow } : {}),
    complete: (request) => traced(provider, tracer, request),
  };
}

async function* traced(
  provider: ModelProvider,
  tracer: Tracer,
  request: CompletionRequest,
): AsyncGenerator<CompletionChunk> {
  const labels = request.labels ?? {};
  const parent = labels.turnId ? traceRoot(labels.turnId) : undefined;
  const ctx = parent
    ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, traceFlags: TraceFlags.SAMPLED, isRemote: true })
    : ROOT_CONTEXT;
  const attributes: Record<string, string> = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider.name,
    'gen_ai.request.model': provider.model,
    'demiurge.purpose': request.purpose ?? 'turn',
  };
  for (const [key, value] of Object.entries(labels)) attributes[`demiurge.${snake(key)}`] = value;
  const span: Span = tracer.startSpan('demiurge.model_request', { kind: SpanKind.CLIENT, attributes }, ctx);
  let retries = 0;
  const onRetry: CompletionRequest['onRetry'] = (retry) => {
    retries++;
    span.addEvent('retry', { 'demiurge.attempt': retry.attempt, 'demiurge.reason': retry.reason });
    request.onRetry?.(retry);
  };
  try {
    for await (const chunk of provider.complete({ ...request, onRetry })) {
      if (chunk.type === 'done') {
        span.setAttributes({
          'gen_ai.usage.input_tokens': chunk.usage.inputTokens,
          'gen_ai.usage.output_tokens': chunk.usage.outputTokens,
          'gen_ai.response.finish_reasons': [chunk.finishReason],
        });
      }
      yield chunk;
    }
    span.setStatus({ code: SpanStatusCode.OK });
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code === 'string') span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: typeof message === 'string' ? message : String(error) });
    throw error;
  } finally {
    span.setAttribute('demiurge.retries', retries);
    span.end();
  }
}

/** `turnId` → `turn_id`. */
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
