import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dumpProjections, type StoredEventRecord } from '@demiurge/event-store';
import type { ChainHead } from '@demiurge/event-store-sqlite';
import { describeStore, type StoreSelection } from '@demiurge/host';
import { verifyLog } from '@demiurge/lifecycle';
import { importInto, storedRecords, withStore } from '../log-transfer.js';
import { checkInvariants, Invariant } from '../verify/invariants.js';
import { checkPinnedRevisions } from '../verify/pinned-revisions.js';
import { diffProjection, type ProjectionDifference } from '../verify/projection-diff.js';
import type { VerifyReport } from './verify.js';

const REPORT_LIMIT = 100;

async function* upTo(records: AsyncIterable<StoredEventRecord>, head: number): AsyncGenerator<StoredEventRecord> {
  for await (const record of records) {
    if (record.position > head) return;
    yield record;
  }
}

/**
 * `verify` on PostgreSQL: there is no file to snapshot, so it reads the live database. The hash chain, every
 * stream through its lifecycle machine and the invariants on the live projections; then the log up to the
 * head it saw is copied into a private temporary SQLite store whose projections, built from that log, must
 * equal the live ones. Writes in flight while it reads can show as differences: verify a quiet database.
 */
export async function verifyPostgres(
  selection: Extract<StoreSelection, { kind: 'postgres' }>,
  options: { head?: boolean; kept?: ChainHead; coreStore: string },
): Promise<VerifyReport | VerifyReport['chain']> {
  const started = Date.now();
  return withStore(selection, async (store) => {
    const chain = await store.verifyChain(options.kept ? { kept: options.kept } : {});
    if (options.head) return chain;
    const head = await store.head();
    const log = await verifyLog(store.iterate(), { maxViolations: REPORT_LIMIT });
    const findings = [
      ...(await checkInvariants(store, Date.now())),
      ...(await checkPinnedRevisions(store, options.coreStore)),
    ];
    const live = await dumpProjections(store);
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-verify-'));
    const differences: ProjectionDifference[] = [];
    try {
      const copy: StoreSelection = { kind: 'sqlite', path: join(dir, 'runtime.sqlite3'), synchronous: 'NORMAL' };
      await importInto(copy, upTo(storedRecords(selection), head));
      const rebuilt = await withStore(copy, (s) => dumpProjections(s));
      for (const name of store.projectorNames) differences.push(...diffProjection(name, live[name]!, rebuilt[name]!));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      ok: chain.ok && log.ok && findings.length === 0 && differences.length === 0,
      database: describeStore(selection),
      head,
      durationMs: Date.now() - started,
      chain,
      log: { ...log, violations: [...log.violations] },
      invariants: { ok: findings.length === 0, checked: Object.values(Invariant), findings },
      projections: {
        ok: differences.length === 0,
        checked: [...store.projectorNames],
        differenceCount: differences.length,
        differences: differences.slice(0, REPORT_LIMIT),
        notes: ['PostgreSQL: read live; projections compared with a rebuild of the log into a temporary SQLite copy'],
      },
    };
  });
}
