import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fuzzSettings } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { configText, fakeScriptText, operatorRequest, type StoreSnapshot, storeSnapshot } from './fuzz-inputs.js';
import {
  INIT,
  type RawGateway,
  rawGateway,
  request,
  type ServeProcess,
  startServe,
  writeHostHome,
} from './serve-process.js';

/**
 * End-to-end fuzz of the input surfaces (docs/testing-fuzz.md): mutated operator frames against a real serving
 * host over its unix socket, and mutated config.yaml files through the real CLI. Every refusal is clear and
 * writes nothing: the log head and every projection table are the same before and after it.
 * A fixed seed (FUZZ_SEED), a bounded number of runs (FUZZ_RUNS for longer runs).
 */

/** Waits until the store stops changing (a turn an accepted submit started has ended). */
async function settled(home: string): Promise<StoreSnapshot | undefined> {
  let last = storeSnapshot(home);
  for (let quiet = 0; quiet < 3; ) {
    await new Promise((r) => setTimeout(r, 120));
    const now = storeSnapshot(home);
    quiet = JSON.stringify(now) === JSON.stringify(last) ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

/** Whether the session dialect reads a param as text: a non-blank string, a number or a boolean. */
const isText = (value: unknown) =>
  (typeof value === 'string' && value.trim() !== '') || typeof value === 'number' || typeof value === 'boolean';

/** Whether an answer is a refusal: an error, or the session dialect's `accepted: false` / `handled: false`. */
function refused(answer: Record<string, unknown>): boolean {
  if ('error' in answer) return true;
  const result = answer.result as Record<string, unknown> | null;
  return result?.accepted === false || result?.handled === false;
}

describe('operator protocol fuzz against a real serving host', () => {
  const home = tempHome();
  let serve: ServeProcess;
  let session: string;
  beforeAll(async () => {
    const ws = writeHostHome(home.path);
    serve = await startServe(home.path, ws);
    const gw = await rawGateway(serve.socket);
    gw.write(request('init', 'operator.initialize', INIT));
    await gw.take((f) => f.id === 'init');
    gw.write(request('first', 'operator.submit', { text: 'hello' }));
    session = ((await gw.take((f) => f.id === 'first')).result as { session_id: string }).session_id;
    gw.close();
    // The comparison has something to compare: a log with events and projections.
    expect((await settled(home.path))?.head).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    home.remove();
  });

  it('answers every mutated frame without an internal error, and a refusal writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(operatorRequest(session), { minLength: 1, maxLength: 6 }),
        async (original, requests) => {
          const gw: RawGateway = await rawGateway(serve.socket);
          try {
            // The original (session-bound) handshake, or this project's with a client name.
            const init = original ? { protocol_version: 1, session_id: session } : INIT;
            gw.write(request('init', 'operator.initialize', init));
            expect(await gw.take((f) => f.id === 'init')).toHaveProperty('result');
            let before = await settled(home.path);
            for (const [i, r] of requests.entries()) {
              const id = `fz${i}`;
              gw.write(`${JSON.stringify({ id, ...r })}\n`);
              const answer = await gw.take((f) => f.id === id, 30_000);
              if ('error' in answer) {
                const error = answer.error as { code: string; message: string };
                expect(error.code, error.message).not.toBe('internal');
                expect(error.message).not.toMatch(/unexpected error|\n\s+at /i);
                expect(error.message.length).toBeLessThan(600);
              }
              if (original && r.method === 'operator.submit' && !isText((r.params as Record<string, unknown>)?.text)) {
                // The session dialect reads an odd text as empty: refused, never "[object Object]" (params that
                // are not an object at all are an invalid_params error).
                expect(refused(answer), JSON.stringify(answer)).toBe(true);
              }
              if (refused(answer)) {
                expect(storeSnapshot(home.path), JSON.stringify(r).slice(0, 300)).toEqual(before);
              } else {
                before = await settled(home.path);
              }
            }
          } finally {
            gw.close();
          }
          expect(serve.child.exitCode).toBeNull();
        },
      ),
      fuzzSettings('operator frames (serving host)', 20),
    );
    expect(serve.stderr()).not.toMatch(/unexpected|internal/i);
  });
});

describe('operator protocol fuzz: regressions (real serving host)', () => {
  it('regression (fuzz): a session-bound submit {"text":{}} is refused and writes nothing', async () => {
    const home = tempHome();
    const serve = await startServe(home.path, writeHostHome(home.path));
    try {
      const gw = await rawGateway(serve.socket);
      gw.write(request('init', 'operator.initialize', { protocol_version: 1 }));
      await gw.take((f) => f.id === 'init');
      const before = await settled(home.path);
      gw.write(request('odd', 'operator.submit', { text: { a: 1 } }));
      expect(await gw.take((f) => f.id === 'odd')).toMatchObject({ result: { accepted: false } });
      expect(await settled(home.path)).toEqual(before);
      gw.close();
    } finally {
      await serve.stop('SIGKILL');
      home.remove();
    }
  });
});

describe('config.yaml fuzz through the real CLI', () => {
  const home = tempHome();
  let store: StoreSnapshot | undefined;
  beforeAll(async () => {
    writeHostHome(home.path);
    const first = await demiurge(['run', 'hello', '--home', home.path]);
    expect(first.code, first.stderr).toBe(0);
    store = storeSnapshot(home.path);
  });
  afterAll(() => home.remove());

  it('`demiurge status` starts or refuses in one line naming config.yaml, the store untouched', async () => {
    const config = join(home.path, 'config.yaml');
    await fc.assert(
      fc.asyncProperty(configText, async (text) => {
        writeFileSync(config, text);
        const run = await demiurge(['status', '--home', home.path]);
        expect(run.stderr).not.toMatch(/unexpected error|\n\s+at |Warning/);
        if (run.code !== 0) {
          expect(run.code, run.stderr).toBe(2);
          expect(run.stderr).toMatch(/^demiurge: .*config\.yaml.*\n$/);
        }
        expect(storeSnapshot(home.path)).toEqual(store);
      }),
      fuzzSettings('config.yaml (CLI)', 10),
    );
  });

  it('regression (fuzz): an alias bomb in config.yaml is exit 2 naming the file, not "unexpected error"', async () => {
    const bomb = ['a: &a [x,x,x,x,x,x,x,x,x]'];
    for (let i = 1; i < 9; i++) {
      const [prev, next] = [String.fromCharCode(96 + i), String.fromCharCode(97 + i)];
      bomb.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    writeFileSync(join(home.path, 'config.yaml'), `${bomb.join('\n')}\n`);
    const run = await demiurge(['status', '--home', home.path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `demiurge: ${join(home.path, 'config.yaml')}: (yaml): Excessive alias count indicates a resource exhaustion attack\n`,
    );
    expect(storeSnapshot(home.path)).toEqual(store);
  });
});

describe('fake provider script fuzz through the real CLI', () => {
  const home = tempHome();
  beforeAll(() => {
    writeHostHome(home.path, { extra: [] });
    writeFileSync(
      join(home.path, 'config.yaml'),
      'provider:\n  name: fake\n  fake_script: s.yaml\nscheduler:\n  enabled: false\n',
    );
  });
  afterAll(() => home.remove());

  it('`demiurge run` plays the script or refuses it (exit 2) naming the file, the store untouched', async () => {
    const script = join(home.path, 's.yaml');
    await fc.assert(
      fc.asyncProperty(fakeScriptText, async (text) => {
        writeFileSync(script, text);
        const before = storeSnapshot(home.path);
        const run = await demiurge(['run', 'hello', '--home', home.path]);
        expect(run.stderr).not.toMatch(/unexpected error|\n\s+at |Warning/);
        if (run.code === 0) return;
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toMatch(new RegExp(`^demiurge: invalid fake script ${script}.*\n$`));
        expect(storeSnapshot(home.path)).toEqual(before);
      }),
      fuzzSettings('fake scripts (CLI)', 8),
    );
  });
});
