import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dumpProjections } from '@demiurge/event-store';
import {
  type ChainHead,
  type ChainReport,
  checkStoreFile,
  openSqliteEventStore,
  readSchemaInfo,
  snapshotDatabase,
} from '@demiurge/event-store-sqlite';
import { coreStoreDir, describeStore, loadConfig, storeSelection } from '@demiurge/host';
import { type LogViolation, verifyLog } from '@demiurge/lifecycle';
import { ExitCode, UsageError } from '../cli-errors.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { NoDatabaseError, runtimeProjectors } from '../runtime-store.js';
import { checkInvariants, Invariant, type InvariantFinding } from '../verify/invariants.js';
import { checkPinnedRevisions } from '../verify/pinned-revisions.js';
import { describeDifference, diffProjection, type ProjectionDifference } from '../verify/projection-diff.js';

/** How many log violations and projection differences the report lists (all are counted). */
const REPORT_LIMIT = 100;

/** What `demiurge verify --json` prints. */
export interface VerifyReport {
  readonly ok: boolean;
  readonly database: string;
  readonly head: number;
  readonly durationMs: number;
  /** Every event's hash recomputed from its content and the previous hash; the first mismatch is named. */
  readonly chain: ChainReport & { readonly note?: string };
  readonly log: {
    readonly ok: boolean;
    readonly eventsChecked: number;
    readonly streams: number;
    readonly violationCount: number;
    readonly violations: readonly LogViolation[];
  };
  readonly invariants: {
    readonly ok: boolean;
    readonly checked: readonly Invariant[];
    readonly findings: readonly InvariantFinding[];
  };
  readonly projections: {
    readonly ok: boolean;
    readonly checked: readonly string[];
    readonly differenceCount: number;
    readonly differences: readonly ProjectionDifference[];
    /** Facts that are not violations (a projection the next open rebuilds, one behind the head). */
    readonly notes: readonly string[];
  };
}

/** The schema version at which events started carrying their hash (migration 2). */
const CHAIN_SCHEMA_VERSION = 2;

/** Notes on the snapshot's projector checkpoints, read before the store opens it (and catches them up). */
function checkpointNotes(info: ReturnType<typeof readSchemaInfo>): string[] {
  const notes: string[] = [];
  for (const p of runtimeProjectors) {
    const cp = info.checkpoints.find((c) => c.name === p.name);
    if (!cp) notes.push(`projection ${p.name} was never built in this store; opening it builds it from the log`);
    else if (cp.version !== p.version) {
      notes.push(
        `projection ${p.name} is at version ${cp.version}, this code has ${p.version}; the next open rebuilds it`,
      );
    } else if (cp.position < info.head) {
      notes.push(`projection ${p.name} is at position ${cp.position} of ${info.head}; the next open catches it up`);
    }
  }
  return notes;
}

/**
 * Verifies a consistent copy of the store (`VACUUM INTO` a private temp dir; the user's file is only read):
 * the log through the machines, the invariants on the live projections, and each projection equal to a
 * rebuild of the copy.
 */
export async function verifyCommand(
  paths: HomePaths,
  options: { json: boolean; head?: boolean; expectHead?: string },
  io: CommandIo,
): Promise<ExitCode> {
  const kept = options.expectHead === undefined ? undefined : parseKeptHead(options.expectHead);
  const selection = storeSelection(paths.home, loadConfig(paths.home));
  if (selection.kind === 'postgres') {
    const { verifyPostgres } = await import('./verify-postgres.js');
    const result = await verifyPostgres(selection, {
      coreStore: coreStoreDir(paths.home),
      ...(options.head ? { head: true } : {}),
      ...(kept ? { kept } : {}),
    });
    if (!('log' in result)) return printHead(describeStore(selection), result, options.json, io);
    if (options.json) io.out(JSON.stringify(result));
    else for (const line of renderVerifyReport(result)) io.out(line);
    return result.ok ? ExitCode.ok : ExitCode.failure;
  }
  if (!existsSync(paths.database)) throw new NoDatabaseError(paths.database);
  const started = Date.now();
  // The whole file, every page: a damaged store is refused here with its own error, never copied.
  checkStoreFile(paths.database, { integrity: 'full' });
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-verify-'));
  try {
    const copy = join(dir, 'runtime.sqlite3');
    snapshotDatabase(paths.database, copy);
    const info = readSchemaInfo(copy);
    const notes = checkpointNotes(info);
    const store = await openSqliteEventStore({ path: copy, projectors: runtimeProjectors, synchronous: 'NORMAL' });
    let report: VerifyReport;
    try {
      const chain = {
        ...(await store.verifyChain(kept ? { kept } : {})),
        ...(info.version < CHAIN_SCHEMA_VERSION && info.head > 0
          ? { note: `the store predates the hash chain: its ${info.head} event(s) are chained as they are now` }
          : {}),
      };
      if (options.head) return printHead(paths.database, chain, options.json, io);
      const log = await verifyLog(store.iterate(), { maxViolations: REPORT_LIMIT, fencing: true });
      const findings = [
        ...(await checkInvariants(store, Date.now())),
        ...(await checkPinnedRevisions(store, coreStoreDir(paths.home))),
      ];
      const live = await dumpProjections(store);
      await store.rebuild();
      const rebuilt = await dumpProjections(store);
      const differences: ProjectionDifference[] = [];
      for (const name of store.projectorNames) differences.push(...diffProjection(name, live[name]!, rebuilt[name]!));
      report = {
        ok: chain.ok && log.ok && findings.length === 0 && differences.length === 0,
        database: paths.database,
        head: await store.head(),
        durationMs: Date.now() - started,
        chain,
        log: { ...log, violations: [...log.violations] },
        invariants: { ok: findings.length === 0, checked: Object.values(Invariant), findings },
        projections: {
          ok: differences.length === 0,
          checked: [...store.projectorNames],
          differenceCount: differences.length,
          differences: differences.slice(0, REPORT_LIMIT),
          notes,
        },
      };
    } finally {
      await store.close();
    }
    if (options.json) io.out(JSON.stringify(report));
    else for (const line of renderVerifyReport(report)) io.out(line);
    return report.ok ? ExitCode.ok : ExitCode.failure;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `verify --head`: the chain's head once the chain holds, for the operator to keep elsewhere. */
function printHead(database: string, chain: VerifyReport['chain'], json: boolean, io: CommandIo): ExitCode {
  if (json) io.out(JSON.stringify({ database, ...chain }));
  else if (chain.ok) io.out(`head ${chain.head.position} ${chain.head.hash}`);
  else for (const line of renderChain(chain)) io.out(line);
  return chain.ok ? ExitCode.ok : ExitCode.failure;
}

/** `--expect-head 41:6f1c…` (or the `head 41 6f1c…` that `--head` printed): a head kept earlier. */
function parseKeptHead(text: string): ChainHead {
  const match = /^(?:head\s+)?(\d+)[:\s]+([0-9a-fA-F]{64})$/.exec(text.trim());
  if (!match) {
    throw new UsageError(
      `--expect-head must be <position>:<hash> as "demiurge verify --head" printed it (64 hex digits), not "${text}"`,
    );
  }
  return { position: Number(match[1]), hash: match[2]!.toLowerCase() };
}

function renderChain(chain: VerifyReport['chain']): string[] {
  const lines = chain.firstBreak
    ? [
        `fail  chain: position ${chain.firstBreak.position}: ${chain.firstBreak.reason} (${chain.eventsChecked - 1} event(s) before it match)`,
      ]
    : [
        `ok    chain: ${chain.eventsChecked} event(s) match their hashes; head ${chain.head.position} ${chain.head.hash}`,
      ];
  const kept = chain.kept;
  if (kept?.ok) lines.push(`ok    kept head: the log passes through ${kept.head.position} ${kept.head.hash}`);
  else if (kept) lines.push(`fail  kept head ${kept.head.position} ${kept.head.hash}: ${kept.reason}`);
  return lines;
}

const more = (shown: number, total: number) => (total > shown ? [`        ... and ${total - shown} more`] : []);

export function renderVerifyReport(r: VerifyReport): string[] {
  const lines = [`verify ${r.database}: head ${r.head}, ${r.log.streams} stream(s)`, ...renderChain(r.chain)];
  if (r.chain.note) lines.push(`note  ${r.chain.note}`);
  if (r.log.ok)
    lines.push(
      `ok    log: ${r.log.eventsChecked} event(s) in ${r.log.streams} stream(s) follow their lifecycle machines`,
    );
  else {
    lines.push(`fail  log: ${r.log.violationCount} violation(s)`);
    for (const v of r.log.violations) lines.push(`        ${v.kind}: ${v.message}`);
    lines.push(...more(r.log.violations.length, r.log.violationCount));
  }
  if (r.invariants.ok) lines.push(`ok    invariants: ${r.invariants.checked.join(', ')}`);
  else {
    lines.push(`fail  invariants: ${r.invariants.findings.length} finding(s)`);
    for (const f of r.invariants.findings) lines.push(`        ${f.invariant}: ${f.message}`);
  }
  if (r.projections.ok) {
    lines.push(
      `ok    projections: ${r.projections.checked.length} equal a fresh rebuild (${r.projections.checked.join(', ')})`,
    );
  } else {
    lines.push(`fail  projections: ${r.projections.differenceCount} document(s) differ from a fresh rebuild`);
    for (const d of r.projections.differences) lines.push(`        ${describeDifference(d)}`);
    lines.push(...more(r.projections.differences.length, r.projections.differenceCount));
  }
  for (const n of r.projections.notes) lines.push(`note  ${n}`);
  const problems =
    (r.chain.firstBreak ? 1 : 0) +
    (r.chain.kept?.ok === false ? 1 : 0) +
    r.log.violationCount +
    r.invariants.findings.length +
    r.projections.differenceCount;
  lines.push(r.ok ? `verify: ok (${r.durationMs} ms)` : `verify: ${problems} problem(s) found`);
  return lines;
}
