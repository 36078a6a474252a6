import { z } from 'zod';
import { ProviderConfigError } from './errors.js';
import { createFakeProvider } from './fake.js';
import { loadFakeScript } from './fake-script.js';
import { createOpenAIProvider } from './openai.js';
import type { ModelProvider } from './provider.js';

const positiveInt = z.number().int().positive();

/** Which provider to run, as written in a config file or assembled from flags. */
export const ProviderConfig = z.discriminatedUnion(
  'provider',
  [
    z.strictObject({
      provider: z.literal('fake'),
      model: z.string().min(1).optional(),
      /** Path of a YAML or JSON fake script. */
      fakeScript: z.string().min(1).optional(),
      /** The context window in tokens (default: by model name, `contextWindowFor`). */
      contextWindow: positiveInt.optional(),
    }),
    z.strictObject({
      provider: z.literal('openai'),
      model: z.string().min(1).optional(),
      baseUrl: z.url({ protocol: /^https?$/ }).optional(),
      apiKey: z.string().min(1).optional(),
      timeoutMs: positiveInt.optional(),
      maxRetries: z.number().int().min(0).optional(),
      retryBaseMs: z.number().int().min(0).optional(),
      maxRetryDelayMs: z.number().int().min(0).optional(),
      /** The context window in tokens (default: by model name, `contextWindowFor`). */
      contextWindow: positiveInt.optional(),
    }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? 'must be "fake" or "openai"' : undefined) },
);
export type ProviderConfig = z.input<typeof ProviderConfig>;

export interface ProviderFromConfigOptions {
  /** Fills in what the config leaves out: `OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_API_KEY`. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Passed to the OpenAI adapter (for tests). */
  readonly fetch?: typeof fetch | undefined;
}

/** The base URL used when neither the config nor `OPENAI_BASE_URL` names one. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Validates a provider config and builds the provider. The config wins over the environment; an `openai`
 * provider needs a model (`model` or `OPENAI_MODEL`) and defaults its base URL to {@link DEFAULT_OPENAI_BASE_URL}.
 * A bad config throws {@link ProviderConfigError} naming the field; a bad fake script a `FakeScriptError`.
 *
 * @example
 * ```ts
 * const provider = await providerFromConfig({ provider: 'openai', model: 'gpt-4.1-mini' });
 * const offline = await providerFromConfig({ provider: 'fake', fakeScript: 'scripts/demo.yaml' });
 * ```
 */
export async function providerFromConfig(
  config: unknown,
  options: ProviderFromConfigOptions = {},
): Promise<ModelProvider> {
  const result = ProviderConfig.safeParse(config);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ProviderConfigError(issue?.path ?? [], issue?.message ?? 'invalid');
  }
  const parsed = result.data;
  const env = options.env ?? process.env;
  if (parsed.provider === 'fake') {
    const script = parsed.fakeScript === undefined ? undefined : await loadFakeScript(parsed.fakeScript);
    return withWindow(createFakeProvider({ script, model: parsed.model }), parsed.contextWindow);
  }
  const model = parsed.model ?? nonEmpty(env.OPENAI_MODEL);
  if (model === undefined) {
    throw new ProviderConfigError(['model'], 'the openai provider needs a model: set `model` or OPENAI_MODEL');
  }
  const baseUrl = parsed.baseUrl ?? nonEmpty(env.OPENAI_BASE_URL) ?? DEFAULT_OPENAI_BASE_URL;
  if (!URL.canParse(baseUrl)) {
    throw new ProviderConfigError(['baseUrl'], `OPENAI_BASE_URL is not a URL: "${baseUrl}"`);
  }
  const provider = createOpenAIProvider({
    baseUrl,
    model,
    apiKey: parsed.apiKey,
    timeoutMs: parsed.timeoutMs,
    maxRetries: parsed.maxRetries,
    retryBaseMs: parsed.retryBaseMs,
    maxRetryDelayMs: parsed.maxRetryDelayMs,
    fetch: options.fetch,
    env,
  });
  return withWindow(provider, parsed.contextWindow);
}

/** The provider with its configured context window, or as it is when the config names none. */
function withWindow(provider: ModelProvider, contextWindow: number | undefined): ModelProvider {
  if (contextWindow === undefined) return provider;
  return {
    name: provider.name,
    model: provider.model,
    contextWindow,
    complete: (request) => provider.complete(request),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
