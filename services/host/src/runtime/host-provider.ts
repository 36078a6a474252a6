import { resolve } from 'node:path';
import { type ModelProvider, providerFromConfig } from '@demiurge/providers';
import type { HostConfig } from '../config.js';

/** The model provider a host's configuration names (the fake one's script resolved against the home). */
export function hostProvider(config: HostConfig, home: string, env: NodeJS.ProcessEnv): Promise<ModelProvider> {
  const p = config.provider;
  return providerFromConfig(
    p.name === 'fake'
      ? {
          provider: 'fake',
          ...(p.model ? { model: p.model } : {}),
          ...(p.fake_script ? { fakeScript: resolve(home, p.fake_script) } : {}),
          ...(p.context_window ? { contextWindow: p.context_window } : {}),
        }
      : {
          provider: 'openai',
          ...(p.model ? { model: p.model } : {}),
          ...(p.base_url ? { baseUrl: p.base_url } : {}),
          ...(p.timeout_ms ? { timeoutMs: p.timeout_ms } : {}),
          ...(p.max_retries !== undefined ? { maxRetries: p.max_retries } : {}),
          ...(p.context_window ? { contextWindow: p.context_window } : {}),
          ...(p.api_key_env && env[p.api_key_env] ? { apiKey: env[p.api_key_env] } : {}),
        },
    { env },
  );
}
