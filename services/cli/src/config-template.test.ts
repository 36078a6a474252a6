import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostConfig, loadConfig } from '@demiurge/host';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIG_TEMPLATE } from './config-template.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const homeWith = (config: string) => {
  const home = mkdtempSync(join(tmpdir(), 'demiurge-config-'));
  dirs.push(home);
  writeFileSync(join(home, 'config.yaml'), config);
  return home;
};

/** The template with every commented key line uncommented (`# key: value` → `key: value`, indentation kept). */
const uncommented = CONFIG_TEMPLATE.split('\n')
  .map((line) => line.replace(/^(\s*)# ( *[a-z_]+:.*)$/, '$1$2'))
  .join('\n');

describe('the config.yaml template', () => {
  it('loads as the defaults with the fake provider', () => {
    expect(loadConfig(homeWith(CONFIG_TEMPLATE), {}, {})).toEqual(HostConfig.parse({}));
  });

  it('documents only real keys, and every top-level key of HostConfig', () => {
    const config = loadConfig(homeWith(uncommented), {}, {});
    expect(config.provider).toMatchObject({ name: 'fake', model: 'gpt-4o-mini', api_key_env: 'OPENAI_API_KEY' });
    expect(config.delivery.webhook).toEqual({ url: 'https://example.com/demiurge/deliveries', timeout_ms: 10_000 });
    const documented = [...uncommented.matchAll(/^([a-z_]+):/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(HostConfig.shape).sort());
  });
});
