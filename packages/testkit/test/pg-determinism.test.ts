import type { RecordedEvent } from '@demiurge/contracts';
import { openPostgresEventStore } from '@demiurge/event-store-postgres';
import { hostProjectors } from '@demiurge/host';
import { expect, it } from 'vitest';
import { renderSimulateReport, runScenario, type SimAction, simulate, simulateSeed } from '../src/index.js';
import { simPostgres } from './pg-server.js';

// Determinism and the injected bug on PostgreSQL: each scenario in a fresh schema of a real server started by
// this file. The same seed gives the same log on PostgreSQL every time; a log on PostgreSQL is not the one the
// same seed gives on SQLite (concurrent parts of the runtime interleave differently: docs/testing.md).
const { store, describePg } = await simPostgres();

// A turn with tools, a detached task, failed and ambiguous sends, a takeover by a second host, a clock jump,
// recovery, then a crash of the second host and a restart on the same schema.
const rich: SimAction[] = [
  { kind: 'submit', tools: ['ok', 'fail'], provider: null },
  { kind: 'task', outcome: 'ok' },
  { kind: 'dispatch', sink: 'fail' },
  { kind: 'submit', tools: ['hang'], provider: null },
  { kind: 'dispatch', sink: 'ambiguous' },
  { kind: 'crash', restart: 'second' },
  { kind: 'advance', ms: 3_600_000 },
  { kind: 'recover' },
  { kind: 'dispatch', sink: 'ok' },
  { kind: 'resolve' },
  { kind: 'crash', restart: 'same' },
  { kind: 'submit', tools: ['ok'], provider: null },
];

async function logOf(url: string): Promise<RecordedEvent[]> {
  const kept = await openPostgresEventStore({ url, projectors: hostProjectors });
  const events: RecordedEvent[] = [];
  for await (const e of kept.iterate()) events.push(e);
  await kept.close();
  return events;
}

describePg(
  'the simulator on PostgreSQL',
  () => {
    it('the same seed gives the same log hash on PostgreSQL twice; a second host and a restart run on the same schema', async () => {
      const a = await runScenario(1, rich, { store, keep: true });
      expect(a.failure).toBeUndefined();
      expect(a.storeUrl).toMatch(/search_path%3Ddemiurge_sim_/);
      const events = await logOf(a.storeUrl ?? '');
      expect(events).toHaveLength(a.events);
      const owners = events.filter((e) => e.type === 'run.owner_claimed').map((e) => e.meta.actor?.id);
      expect(owners).toContain('sim-host-2');
      expect(events.some((e) => e.meta.actor?.id === 'sim-host-3')).toBe(true);
      const b = await runScenario(1, rich, { store });
      expect(b.failure).toBeUndefined();
      expect(b.hash).toBe(a.hash);
      expect(b.events).toBe(a.events);
      const other = await runScenario(2, rich, { store });
      expect(other.hash).not.toBe(a.hash);
      // The same seed on SQLite passes the same checks; its log is its own (see docs/testing.md).
      expect((await runScenario(1, rich)).failure).toBeUndefined();
    });

    it('a batch gives each run and the batch the same hash on PostgreSQL every time', async () => {
      const first = await simulate({ seeds: 6, seed: 5, store });
      const again = await simulate({ seeds: 6, seed: 5, store });
      expect(first.ok).toBe(true);
      expect(again.runs.map((r) => r.hash)).toEqual(first.runs.map((r) => r.hash));
      expect(again.hash).toBe(first.hash);
    });

    it('an injected bug (a delivery acknowledged before it is sent) is caught on PostgreSQL with its seed and shrunk trace', async () => {
      const scan = await simulate({ seeds: 12, seed: 1, bug: 'ackBeforeSend', shrink: false, store });
      const failed = scan.runs.find((r) => !r.ok);
      expect(failed, 'no seed of 1..12 caught ackBeforeSend on PostgreSQL').toBeDefined();
      const seed = failed?.seed ?? 0;
      const shrunk = await simulateSeed(seed, { bug: 'ackBeforeSend', store });
      expect(shrunk.failure?.problems.join('\n')).toMatch(/acknowledged \(sent\) but the sink never received it/);
      expect(shrunk.failure?.trace).toEqual(['submit (tools: none)', 'dispatch deliveries (sink ok)']);
      const text = renderSimulateReport({ ...scan, runs: [shrunk] }, 'the bundled core', { store }).join('\n');
      expect(text).toContain(`FAIL seed ${seed}`);
      expect(text).toMatch(new RegExp(`reproduce: demiurge simulate --seed ${seed} --seeds 1 --store-url postgres://`));
      expect(text).not.toContain('demiurge-test@');
      // Without the bug, the same seed passes on PostgreSQL.
      expect((await simulateSeed(seed, { store })).ok).toBe(true);
    });
  },
  600_000,
);
