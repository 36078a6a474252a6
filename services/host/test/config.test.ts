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

describe('loadConfig: the store', () => {
  const url = 'postgres://demiurge:secret@db.internal:5432/demiurge';

  it('is the SQLite file by default, PostgreSQL with kind: postgres and a url', () => {
    expect(loadConfig(home, {}, {}).store).toMatchObject({ kind: 'sqlite' });
    writeFileSync(join(home, 'config.yaml'), `store:\n  kind: postgres\n  url: ${url}\n`);
    expect(loadConfig(home, {}, {}).store).toMatchObject({ kind: 'postgres', url });
  });

  it('takes DEMIURGE_STORE_URL over the file', () => {
    writeFileSync(join(home, 'config.yaml'), 'store:\n  kind: sqlite\n');
    const other = 'postgresql://u@elsewhere/db';
    expect(loadConfig(home, {}, { DEMIURGE_STORE_URL: other }).store).toMatchObject({ kind: 'postgres', url: other });
  });

  it.each([
    ['store:\n  kind: postgres\n', /config\.yaml:2: store\.url: is required with kind: postgres/],
    ['store:\n  kind: mysql\n', /config\.yaml:2: store\.kind: Invalid option/],
    ['store:\n  kind: postgres\n  url: mysql://x/y\n', /config\.yaml:3: store\.url: must be a postgres:\/\//],
    [`store:\n  url: ${url}\n`, /config\.yaml:2: store\.url: is only for kind: postgres/],
  ])('names the field of a bad store %#', (text, message) => {
    writeFileSync(join(home, 'config.yaml'), text);
    expect(() => loadConfig(home, {}, {})).toThrow(message);
  });

  it('refuses a DEMIURGE_STORE_URL that is not a postgres URL, naming the variable', () => {
    expect(() => loadConfig(home, {}, { DEMIURGE_STORE_URL: '/tmp/x.sqlite3' })).toThrow(
      /DEMIURGE_STORE_URL: must be a postgres:\/\//,
    );
  });
});
