import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzSettings, mutatedDocument, yamlText } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, HostConfig, loadConfig } from '../src/config.js';

/** A config.yaml from the real shape (docs/cli.md, HostConfig): every section, valid values. */
const validConfig = fc.record(
  {
    provider: fc.record(
      {
        name: fc.constantFrom('fake', 'openai'),
        model: fc.constantFrom('gpt-4o-mini', 'fake-1'),
        base_url: fc.constant('http://127.0.0.1:9/v1'),
        fake_script: fc.constant('script.yaml'),
        timeout_ms: fc.integer({ min: 1, max: 60_000 }),
        max_retries: fc.nat(5),
        context_window: fc.integer({ min: 1, max: 200_000 }),
      },
      { requiredKeys: [] },
    ),
    compaction: fc.record(
      { enabled: fc.boolean(), threshold: fc.constantFrom(0.5, 0.8), keep_messages: fc.nat(10) },
      { requiredKeys: [] },
    ),
    core: fc.constant('agent'),
    workspace: fc.constant('ws'),
    store: fc.record(
      { kind: fc.constant('sqlite'), synchronous: fc.constantFrom('FULL', 'NORMAL') },
      { requiredKeys: [] },
    ),
    leases: fc.record({ run_ms: fc.integer({ min: 1, max: 60_000 }), work_ms: fc.integer({ min: 1 }) }),
    plan_mode: fc.record({ on_write: fc.constantFrom('deny', 'ask') }),
    delivery: fc.record({ poll_ms: fc.integer({ min: 1, max: 1000 }) }),
    scheduler: fc.record({ enabled: fc.boolean(), tick_ms: fc.integer({ min: 1, max: 1000 }) }),
    http: fc.record({ addr: fc.constantFrom('127.0.0.1:7780', 'localhost:0') }),
    shutdown: fc.record({ deadline_ms: fc.integer({ min: 1, max: 10_000 }) }),
  },
  { requiredKeys: [] },
);

const home = mkdtempSync(join(tmpdir(), 'demiurge-config-fuzz-'));
/** Node warnings (the yaml library's go to stderr, in front of a person): none expected. */
const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(w.message);
process.on('warning', onWarning);
afterAll(() => {
  process.off('warning', onWarning);
  rmSync(home, { recursive: true, force: true });
});
const file = join(home, 'config.yaml');

/** Loads `text` as config.yaml: the config, or the ConfigError; any other throw fails the property. */
function load(text: string): ConfigError | undefined {
  writeFileSync(file, text);
  try {
    loadConfig(home, {}, {});
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw new Error(`loadConfig threw ${String(error)} (not a ConfigError) for:\n${text.slice(0, 2000)}`, {
      cause: error,
    });
  }
}

describe('config.yaml fuzz', () => {
  it('loads or refuses with a ConfigError naming the file, the line and the key', () => {
    fc.assert(
      fc.property(yamlText(mutatedDocument(validConfig)), (text) => {
        const error = load(text);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(warnings).toEqual([]);
        if (!error) {
          // Accepted: the file itself is a valid config (nothing of the wrong type silently ignored).
          // (A section written empty, `provider:`, is its defaults.)
          const value = Object.entries((parse(text) ?? {}) as Record<string, unknown>).filter(([, v]) => v !== null);
          expect(HostConfig.safeParse(Object.fromEntries(value)).success).toBe(true);
          return;
        }
        expect(error.message.startsWith(file)).toBe(true);
        expect(error.key).not.toBe('');
        expect(error.detail).not.toBe('');
        expect(error.message).not.toMatch(/\[object |unexpected error|\n\s+at /i);
        expect(error.message.length).toBeLessThan(600);
      }),
      fuzzSettings('config.yaml', 200),
    );
  });

  it.each([
    ['an alias bomb', `a: &a [x,x,x,x,x,x,x,x,x]\n${bomb()}`, '(yaml)'],
    ['a __proto__ key', '__proto__:\n  polluted: true\n', '__proto__'],
    ['a complex key', '? [complex, key]\n: value\n', '[ complex, key ]'],
    ['a provider that is not a mapping', 'provider: openai\n', 'provider'],
    ['a store that is a list', 'store: [sqlite]\n', 'store'],
  ])('regression (fuzz): %s is a ConfigError', async (_name, text, key) => {
    const error = load(text);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.key).toBe(key);
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    expect(warnings).toEqual([]);
  });
});

function bomb(): string {
  const lines: string[] = [];
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i);
    const next = String.fromCharCode(97 + i);
    lines.push(`${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`);
  }
  return `${lines.join('\n')}\n`;
}
