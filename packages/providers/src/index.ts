export { collectCompletion } from './collect.js';
export {
  CHARS_PER_TOKEN,
  contextWindowFor,
  estimateTokens,
  FALLBACK_CONTEXT_WINDOW,
  KNOWN_CONTEXT_WINDOWS,
  TOKENS_PER_MESSAGE,
} from './context-window.js';
export {
  FakeScriptError,
  ProviderConfigError,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorInit,
} from './errors.js';
export { createFakeProvider, type FakeProviderOptions, FakeScript, FakeStep, fakeSummary } from './fake.js';
export { loadFakeScript, parseFakeScript } from './fake-script.js';
export { createOpenAIProvider, type OpenAIProviderOptions } from './openai.js';
export type {
  ChatMessage,
  Completion,
  CompletionChunk,
  CompletionRequest,
  ModelProvider,
  ToolCallRequest,
  ToolSpec,
  Usage,
} from './provider.js';
export {
  DEFAULT_OPENAI_BASE_URL,
  ProviderConfig,
  type ProviderFromConfigOptions,
  providerFromConfig,
} from './provider-config.js';
