import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-config-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('loadConfig', () => {
  it('defaults to the fake provider and FULL durability without a file', () => {
    const config = loadConfig(home, {}, {});
    expect(config.provider.name).toBe('fake');
    expect(config.store.synchronous).toBe('FULL');
    expect(config.leases.run_ms).toBe(30_000);
  });

  it('reads the file, then the environment, then flags', () => {
    writeFileSync(
      join(home, 'config.yaml'),
      'provider:\n  name: openai\n  model: from-file\n  base_url: http://127.0.0.1:9/v1\n',
    );
    expect(loadConfig(home, {}, {}).provider).toMatchObject({ name: 'openai', model: 'from-file' });
    expect(loadConfig(home, {}, { DEMIURGE_MODEL: 'from-env' }).provider.model).toBe('from-env');
    expect(
      loadConfig(home, { model: 'from-flag', provider: 'fake' }, { DEMIURGE_MODEL: 'from-env' }).provider,
    ).toMatchObject({
      name: 'fake',
      model: 'from-flag',
    });
  });

  it.each([
    ['provider:\n  name: claude\n', /config\.yaml:2: provider\.name: Invalid option/],
    ['store:\n  synchronous: FULL\n  journal: off\n', /config\.yaml:3: store\.journal: unknown key/],
    ['leases:\n  run_ms: -5\n', /config\.yaml:2: leases\.run_ms: Too small/],
    ['provider: [unclosed\n', /config\.yaml:\d+: \(yaml\)/],
    ['- just\n- a list\n', /config\.yaml: \(root\): must be a mapping/],
  ])('a bad file is one clear error naming the key: %j', (text, message) => {
    writeFileSync(join(home, 'config.yaml'), text);
    let error: unknown;
    try {
      loadConfig(home, {}, {});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });
});
