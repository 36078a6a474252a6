import { createIdGenerator, type RecordedEvent, systemClock } from '@demiurge/contracts';
import { openPostgresEventStore, type PostgresEventStore } from '@demiurge/event-store-postgres';
import { startTestPostgres, type TestPostgres } from '@demiurge/event-store-postgres/testing';
import { hostProjectors } from '@demiurge/host';
import { SessionRuntime } from '@demiurge/sessions';
import { afterAll, describe, expect, it } from 'vitest';
import { demiurge, sleep, tempDir } from './cli.js';
import { type Home, writeHome } from './home.js';
import { type HostProcess, startHost } from './host-process.js';
import { crashSeed, createPrng } from './prng.js';
import type { Ack } from './store-checks.js';
import { startWebhookSink, type WebhookSink } from './webhook-sink.js';
import { startWorkload, WORKLOAD_SCRIPT, type WorkloadResult } from './workload.js';

const HOSTS = 3;
const KILLS = Number(process.env.MULTI_HOST_KILLS ?? 20);
const RUN_LEASE_MS = 4000;
const seed = crashSeed();

// Opt-in until a known failure is fixed (issue 17, docs/postgres.md "Several hosts on one database, killed at
// random"): a few delivery.send items whose lease another host expired after their host was killed are never
// claimed again. DEMIURGE_MULTI_HOST=1 runs it. As in the store's tests, a server that cannot start then skips
// the file outside CI (under a title saying why) and fails it in CI.
const optedIn = process.env.DEMIURGE_MULTI_HOST === '1';
let pg: TestPostgres | undefined;
let skipReason = optedIn
  ? ''
  : 'opt-in with DEMIURGE_MULTI_HOST=1: it fails today on delivery.send items not claimed again after a lease expiry';
try {
  if (optedIn) pg = await startTestPostgres();
} catch (err) {
  if (process.env.CI) throw err;
  skipReason = `PostgreSQL could not start here: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!}`;
}
afterAll(() => pg?.stop());
const describePg = pg
  ? describe
  : (((name: string, fn: () => void) => describe.skip(`${name} (skipped: ${skipReason})`, fn)) as typeof describe);

/** Sessions bound to the webhook channel, seeded in the shared database before any host serves it. */
async function seedWebhookSessions(url: string, count: number): Promise<string[]> {
  const store = await openPostgresEventStore({ url, projectors: hostProjectors });
  try {
    const sessions = new SessionRuntime({ store, ids: createIdGenerator(systemClock) });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { session } = await sessions.resolve(
        { coreId: 'default', channel: 'webhook', conversationKey: `multi-host-${i}` },
        { title: `webhook conversation ${i}` },
      );
      ids.push(session.sessionId);
    }
    return ids;
  } finally {
    await store.close();
  }
}

/** The work streams whose last event leaves them to be done by someone (not settled). */
function unsettledWork(events: readonly RecordedEvent[]): string[] {
  const last = new Map<string, RecordedEvent>();
  const kinds = new Map<string, string>();
  for (const e of events) {
    if (e.streamType !== 'work') continue;
    last.set(e.streamId, e);
    if (e.type === 'work.enqueued') kinds.set(e.streamId, (e.data as { kind: string }).kind);
  }
  const open = new Set(['work.enqueued', 'work.claimed', 'work.running', 'work.heartbeat', 'work.lease_expired']);
  return [...last]
    .filter(([, e]) => open.has(e.type) || (e.type === 'work.failed' && (e.data as { retryAt?: string }).retryAt))
    .map(([id, e]) => `${id} ${kinds.get(id)} (${e.type} at position ${e.position}, ${e.recordedAt})`);
}

describePg('three demiurge serve processes on one PostgreSQL (real hosts, real SIGKILL)', () => {
  it(`survive ${KILLS} SIGKILLs of a random host: work done once, no delivery twice, acknowledged turns kept, verify passes`, async () => {
    const prng = createPrng(seed);
    console.log(`multi-host seed ${seed} (CRASH_SEED=${seed} replays the kill moments); ${KILLS} kills`);
    const url = await pg!.createDatabase();
    const env = { DEMIURGE_STORE_URL: url };
    const sink: WebhookSink = await startWebhookSink(() => prng.int(0, 50));
    const dirs = Array.from({ length: HOSTS }, (_, i) => tempDir(`demiurge-multi-host-${i}-`));
    const homes: Home[] = dirs.map((d) =>
      writeHome(d.path, { script: WORKLOAD_SCRIPT, webhookUrl: sink.url, runLeaseMs: RUN_LEASE_MS }),
    );
    const acks: Ack[] = [];
    const sessions: string[] = [];
    const results: WorkloadResult[] = [];
    const hosts: (HostProcess | undefined)[] = [];
    const workloads: (ReturnType<typeof startWorkload> | undefined)[] = [];
    let cycle = 0;
    const start = async (i: number) => {
      hosts[i] = await startHost(homes[i]!.dir, { cwd: homes[i]!.workspace, env });
      workloads[i] = startWorkload({
        socket: hosts[i]!.ready.socket,
        cycle: ++cycle,
        prng,
        acks,
        sessions,
        webhookSessions,
        maxInFlight: 2,
      });
    };
    const stopWorkload = async (i: number) => {
      const w = workloads[i];
      workloads[i] = undefined;
      if (w) results.push(await w.stop());
    };
    const webhookSessions = await seedWebhookSessions(url, 4);
    const started = Date.now();
    let store: PostgresEventStore | undefined;
    try {
      for (let i = 0; i < HOSTS; i++) await start(i);
      for (let k = 1; k <= KILLS; k++) {
        await sleep(prng.int(200, 1500));
        const i = prng.int(0, HOSTS - 1);
        await hosts[i]!.stop('SIGKILL');
        console.log(`kill ${k}: host ${i} at ${Math.round((Date.now() - started) / 1000)} s, ${acks.length} acks`);
        await stopWorkload(i);
        await start(i);
      }
      // Let the hosts finish what the workload started (runs, detached tasks, deliveries), then stop them.
      for (let i = 0; i < HOSTS; i++) await stopWorkload(i);
      store = await openPostgresEventStore({ url, projectors: hostProjectors });
      let unsettled: string[] = [];
      for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(1000)) {
        unsettled = unsettledWork(await store.readAll());
        if (unsettled.length === 0) break;
      }
      for (const h of hosts) await h?.stop('SIGTERM');
      const events = await store.readAll();
      const seconds = Math.round((Date.now() - started) / 1000);
      const submitted = results.reduce((n, r) => n + r.submitted, 0);
      console.log(
        `multi-host: ${KILLS} kills in ${seconds} s, ${acks.length}/${submitted} submits acknowledged, ${events.length} events, ` +
          `webhook ${sink.hits.length} POSTs for ${sink.counts.size} keys`,
      );

      // Every work item succeeded at most once, with the token of a claim it was given.
      const succeeded = new Map<string, number>();
      for (const e of events) {
        if (e.type === 'work.succeeded') succeeded.set(e.streamId, (succeeded.get(e.streamId) ?? 0) + 1);
      }
      // Every check runs, and the test reports all that failed at once.
      const streams = new Set(events.map((e) => e.streamId));
      const verify = await demiurge(['verify', '--json', '--home', homes[0]!.dir], { env });
      let verified: unknown;
      try {
        verified = JSON.parse(verify.stdout);
      } catch {
        verified = `${verify.stdout}\n${verify.stderr}`;
      }
      const report = {
        // Every work item succeeded at most once.
        succeededTwice: [...succeeded].filter(([, n]) => n > 1),
        // No delivery reached the sink twice.
        sentTwice: sink.duplicates(),
        // Every acknowledged submit's session, run and turn are in the log.
        acknowledgedButMissing: acks.flatMap((a) =>
          [a.session_id, a.run_id, a.turn_id].filter((id) => !streams.has(id)),
        ),
        // The log through the machines, the invariants, the hash chain, projections equal to a rebuild.
        verify: verify.code === 0 && (verified as { ok?: boolean }).ok === true ? 'ok' : verified,
        // Nothing left for nobody: every item claimed and completed by one of the hosts.
        unsettledAfter90s: unsettled,
      };
      if (report.unsettledAfter90s.length > 0) {
        // What the hosts said: a loop that stopped would say so on stderr.
        for (const [i, h] of hosts.entries()) {
          const tail = h?.stderr().trim().split('\n').slice(-5).join('\n  ');
          console.log(`host ${i} stderr (last lines):\n  ${tail || '(nothing)'}`);
        }
      }
      expect(report).toEqual({
        succeededTwice: [],
        sentTwice: [],
        acknowledgedButMissing: [],
        verify: 'ok',
        unsettledAfter90s: [],
      });
      expect(succeeded.size).toBeGreaterThan(0);
      expect(sink.hits.length).toBeGreaterThan(0);
      expect(acks.length).toBeGreaterThan(KILLS);
    } finally {
      for (let i = 0; i < HOSTS; i++) await stopWorkload(i).catch(() => {});
      for (const h of hosts) await h?.stop('SIGKILL');
      await store?.close();
      await sink.close();
      for (const d of dirs) d.remove();
    }
  }, 300_000);
});
