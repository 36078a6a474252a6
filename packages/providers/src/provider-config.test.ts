import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import { ProviderConfigError } from './errors.js';
import { providerFromConfig } from './provider-config.js';
import { type OpenAITestServer, startOpenAITestServer } from './testing/index.js';

let server: OpenAITestServer;
let dir: string;
beforeAll(async () => {
  server = await startOpenAITestServer();
  dir = await mkdtemp(join(tmpdir(), 'demiurge-provider-config-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const ask = { messages: [{ role: 'user', content: 'ping' }] as const, tools: [] };

async function configError(config: unknown, env: Record<string, string> = {}): Promise<ProviderConfigError> {
  const error = await providerFromConfig(config, { env }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ProviderConfigError);
  return error as ProviderConfigError;
}

describe('providerFromConfig', () => {
  it('builds the fake, with a script file when one is named', async () => {
    const path = join(dir, 'script.yaml');
    await writeFile(path, '- content: scripted\n');
    const scripted = await providerFromConfig({ provider: 'fake', fakeScript: path, model: 'fake-2' });
    expect(scripted).toMatchObject({ name: 'fake', model: 'fake-2' });
    expect((await collectCompletion(scripted.complete(ask))).content).toBe('scripted');
    const echo = await providerFromConfig({ provider: 'fake' });
    expect((await collectCompletion(echo.complete(ask))).content).toBe('[fake] ping');
  });

  it('builds an openai provider from the config, which wins over the environment', async () => {
    const provider = await providerFromConfig(
      { provider: 'openai', baseUrl: server.baseUrl, model: 'from-config', apiKey: 'sk-config' },
      { env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_MODEL: 'from-env', OPENAI_API_KEY: 'sk-env' } },
    );
    expect(provider).toMatchObject({ name: 'openai', model: 'from-config' });
    expect((await collectCompletion(provider.complete(ask))).content).toBe('[server] ping');
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer sk-config');
    expect(server.requests.at(-1)?.body).toMatchObject({ model: 'from-config' });
  });

  it('fills the base URL, the model and the key in from OPENAI_* variables', async () => {
    const provider = await providerFromConfig(
      { provider: 'openai' },
      { env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_MODEL: 'from-env', OPENAI_API_KEY: 'sk-env' } },
    );
    await collectCompletion(provider.complete(ask));
    expect(provider.model).toBe('from-env');
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer sk-env');
  });

  it('defaults the base URL to the OpenAI API', async () => {
    let url = '';
    const fetch: typeof globalThis.fetch = async (input) => {
      url = String(input);
      throw new TypeError('offline');
    };
    const provider = await providerFromConfig({ provider: 'openai', model: 'gpt', maxRetries: 0 }, { env: {}, fetch });
    await expect(collectCompletion(provider.complete(ask))).rejects.toMatchObject({ code: 'provider_disconnected' });
    expect(url).toBe('https://api.openai.com/v1/chat/completions');
  });

  it('names the field of a bad config', async () => {
    expect((await configError({ provider: 'anthropic' })).message).toBe(
      'invalid provider config at provider: must be "fake" or "openai"',
    );
    expect(await configError({ provider: 'openai', model: 'm', baseUrl: 'not a url' })).toMatchObject({
      path: ['baseUrl'],
      code: 'invalid_spec',
    });
    expect(await configError({ provider: 'openai', model: 'm', maxRetries: -1 })).toMatchObject({
      path: ['maxRetries'],
    });
    expect(await configError({ provider: 'fake', baseUrl: 'http://x' })).toMatchObject({ path: [] });
    expect((await configError({ provider: 'openai' })).message).toBe(
      'invalid provider config at model: the openai provider needs a model: set `model` or OPENAI_MODEL',
    );
    expect((await configError({ provider: 'openai', model: 'm' }, { OPENAI_BASE_URL: 'nope' })).message).toBe(
      'invalid provider config at baseUrl: OPENAI_BASE_URL is not a URL: "nope"',
    );
  });
});
