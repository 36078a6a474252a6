import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';

/**
 * Inputs for the end-to-end fuzz suite (docs/testing-fuzz.md): operator request frames from the protocol's
 * real shapes, then mutated, and config.yaml texts; plus a snapshot of a home's store (the log head and every
 * projection table) to prove a refusal wrote nothing.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const odd: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(1e308, -1, 0, 0.5),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', 'ses_', 'ses_../../x', '\u0000', '__proto__', 'x'.repeat(70_000)),
  fc.constant([] as Json),
  fc.constant({} as Json),
  fc.constant({ text: 'nested' } as Json),
);
/** Text that is not a slash command (a session-bound `command` of one would be a real action). */
const text = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.trimStart().startsWith('/'));

/**
 * The params of each method (no `operator.shutdown`: the host must keep serving), valid for `session`, an
 * existing session of the home.
 */
function validParams(session: string): Record<string, fc.Arbitrary<Record<string, Json>>> {
  const ses = fc.constantFrom(session, 'ses_01JD5Y7Q6N0000000000000001');
  return {
    'operator.submit': fc.record({ session_id: ses, text, plan: fc.boolean() }, { requiredKeys: ['text'] }),
    'operator.reply_prompt': fc.record({ prompt_id: text, text }),
    'operator.reply_approval': fc.record({
      approval_id: fc.constant('apr_01JD5Y7Q6N0000000000000001'),
      decision: fc.constantFrom('grant', 'deny'),
    }),
    'operator.interrupt': fc.record({ session_id: ses }),
    'operator.cancel': fc.record(
      { run_id: fc.constant('run_01JD5Y7Q6N0000000000000001'), session_id: ses, reason: text },
      { requiredKeys: [] },
    ),
    'operator.status': fc.record({ session_id: ses }, { requiredKeys: [] }),
    'operator.history': fc.record(
      { session_id: ses, limit: fc.integer({ min: 1, max: 1000 }) },
      { requiredKeys: ['session_id'] },
    ),
    'operator.compact': fc.record({ session_id: ses }),
    'operator.command': fc.record({ text }),
  };
}

function mutated(params: Record<string, Json>): fc.Arbitrary<Json> {
  const keys = Object.keys(params);
  const options: fc.Arbitrary<Json>[] = [
    fc.tuple(fc.constantFrom('sessionId', 'extra', 'constructor'), odd).map(([k, v]) => ({ ...params, [k]: v })),
    odd,
  ];
  if (keys.length > 0) {
    options.push(fc.tuple(fc.constantFrom(...keys), odd).map(([k, v]) => ({ ...params, [k]: v })));
    options.push(
      fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(params).filter(([key]) => key !== k))),
    );
  }
  return fc.oneof(...options);
}

/** One request (without its id): a method of the protocol with mutated params, or an unknown method. */
export function operatorRequest(session: string): fc.Arbitrary<{ method: Json; params?: Json }> {
  const shapes = validParams(session);
  const methods = Object.keys(shapes);
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .constantFrom(...methods)
        .chain((method) => shapes[method]!.chain(mutated).map((params) => ({ method, params }))),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.oneof(odd, fc.constant('operator.nope')), odd).map(([m, p]) => ({ method: m, params: p })),
    },
  );
}

/** config.yaml texts: the real shape, mutated, and YAML that breaks the loader the ways a person's edit does. */
export const configText: fc.Arbitrary<string> = fc.oneof(
  fc
    .record(
      {
        provider: fc.record(
          { name: fc.constantFrom('fake', 'claude'), timeout_ms: fc.oneof(fc.nat(), odd) },
          { requiredKeys: ['name'] },
        ),
        store: fc.record(
          { kind: fc.constantFrom('sqlite', 'postgres', 'mysql'), synchronous: fc.constantFrom('FULL', 'OFF') },
          { requiredKeys: [] },
        ),
        leases: fc.record({ run_ms: fc.oneof(fc.integer({ min: -5, max: 60_000 }), odd) }),
        scheduler: fc.record({ enabled: fc.constant(false) }),
        extra_key: odd,
      },
      { requiredKeys: ['scheduler'] },
    )
    .map((c) => JSON.stringify(c)),
  fc.constantFrom(
    'provider: [unclosed\n',
    '\tprovider: fake\n',
    'provider:\n  name: fake\nprovider:\n  name: fake\n',
    '? [a, b]\n: c\n',
    '__proto__:\n  polluted: true\n',
    'just a string\n',
    '- a\n- b\n',
    `a: &a [x,x,x,x,x,x,x,x,x]\n${aliasBomb()}`,
    'provider: !!binary aGVsbG8=\n',
    'provider: *nowhere\n',
  ),
);

/** Fake provider scripts: the real step shape (content, tool_calls, match), mutated, and broken YAML. */
export const fakeScriptText: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.record(
        {
          content: fc.oneof(fc.string({ maxLength: 12 }), odd),
          tool_calls: fc.oneof(
            fc.array(
              fc.record(
                {
                  name: fc.oneof(fc.constantFrom('read_file', 'list_dir', 'no_such_tool', ''), odd),
                  arguments: fc.oneof(fc.constant({ path: '.' } as Json), odd),
                },
                { requiredKeys: ['name'] },
              ),
              { maxLength: 2 },
            ),
            odd,
          ),
          match: odd,
          extra: odd,
        },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    )
    .map((steps) => JSON.stringify(steps)),
  odd.map((v) => JSON.stringify(v)),
  fc.constantFrom('- content: [unclosed\n', `- &a [x,x,x,x,x,x,x,x,x]\n${aliasBomb().replace(/^(\w): /gm, '- ')}`),
);

function aliasBomb(): string {
  const lines: string[] = [];
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i);
    const next = String.fromCharCode(97 + i);
    lines.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  return `${lines.join('\n')}\n`;
}

/** The store of a home as a reader sees it: the log head and a hash of every other table. */
export interface StoreSnapshot {
  readonly head: number;
  readonly lastEventId: string | null;
  /** The hash-chain link of the last event. */
  readonly lastHash: string | null;
  readonly tables: string;
}

/** Reads `<home>/runtime/runtime.sqlite3` read-only (the host may be serving it). */
export function storeSnapshot(home: string): StoreSnapshot | undefined {
  const file = join(home, 'runtime', 'runtime.sqlite3');
  if (!existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db.transaction(() => {
      const last = db.prepare('SELECT position, event_id, hash FROM events ORDER BY position DESC LIMIT 1').get() as
        | { position: number; event_id: string; hash: string | null }
        | undefined;
      const names = (
        db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
          .all() as {
          name: string;
        }[]
      ).map((t) => t.name);
      const hash = createHash('sha256');
      for (const name of names) {
        if (name === 'events') continue;
        hash.update(name).update('\0');
        for (const row of db.prepare(`SELECT * FROM "${name}"`).raw().all())
          hash.update(JSON.stringify(row)).update('\n');
      }
      return {
        head: last?.position ?? 0,
        lastEventId: last?.event_id ?? null,
        lastHash: last?.hash ?? null,
        tables: hash.digest('hex'),
      };
    })();
  } finally {
    db.close();
  }
}
