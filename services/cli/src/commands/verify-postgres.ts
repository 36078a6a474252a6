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
/** How many times the projections are read again while the log moves under them. */
const QUIET_ATTEMPTS = 20;

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
 * equal the live ones. The projections are read until the head stays the same across the reading (a host
 * serving the database appends meanwhile); a database that never stays still that long can still show
 * differences: verify a quiet one.
 */
export async function verifyPostgres(
  selection: Extract<StoreSelection, { kind: 'postgres' }>,
  options: { head?: boolean; kept?: ChainHead; coreStore: string },
): Promise<VerifyReport | VerifyReport['chain']> {
  const started = Date.now();
  return withStore(selection, async (store) => {
    const chain = await store.verifyChain(options.kept ? { kept: options.kept } : {});
    if (options.head) return chain;
    const log = await verifyLog(store.iterate(), { maxViolations: REPORT_LIMIT, fencing: true });
    const findings = [
      ...(await checkInvariants(store, Date.now())),
      ...(await checkPinnedRevisions(store, options.coreStore)),
    ];
    // The projections as of one head: a dump during which the head moved (a serving host appended, say a
    // heartbeat) is taken again, so that it is compared with the rebuild of exactly the log it reflects.
    let head = await store.head();
    let live = await dumpProjections(store);
    for (let attempt = 1; attempt < QUIET_ATTEMPTS; attempt++) {
      const after = await store.head();
      if (after === head) break;
      head = after;
      live = await dumpProjections(store);
    }
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
