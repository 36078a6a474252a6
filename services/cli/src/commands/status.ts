import { resolve } from 'node:path';
import { asDomainEvent, coreStreamId } from '@demiurge/contracts';
import type { OperatorStatus } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import type { StoreFileReport } from '@demiurge/event-store-sqlite';
import {
  CoreSnapshotStore,
  coreStoreDir,
  DEFAULT_CORE_DIR,
  describeStore,
  type HostConfig,
  loadConfig,
  type ScheduleOverview,
  scheduleOverview,
} from '@demiurge/host';
import { type McpServerStatus, mcpServerStatus } from '@demiurge/mcp';
import { type NeedsOperatorEntry, operatorStatusReader } from '@demiurge/projector-operator-status';
import { type ApprovalEntry, type LiveRunEntry, runsReader } from '@demiurge/projector-runs';
import { sessionsReader } from '@demiurge/projector-sessions';
import { readCoreId } from '../core-dir.js';
import { counts, describeLease, orDash, shorten, table } from '../format.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { openRuntimeStore } from '../runtime-store.js';

/** A live run as the status shows it: with whether its owner's lease has run out. */
export interface StatusRun extends LiveRunEntry {
  readonly leaseExpired: boolean;
}

/** What `demiurge status --json` prints. */
export interface StatusReport {
  readonly home: string;
  readonly database: string;
  readonly head: number;
  /**
   * The store's check at open: `quickCheck` `ran` or `remembered` (the files were unchanged since one passed
   * at `checkedAt`), `integrity` `full` or `partial` (every table but `events`, on a file over 128 MiB).
   */
  readonly storeCheck: {
    readonly quickCheck: 'ran' | 'remembered';
    readonly integrity: 'full' | 'partial';
    readonly checkedAt: string;
    readonly durationMs: number;
  } | null;
  readonly config: { readonly provider: string; readonly model: string | null; readonly core: string | null };
  /** The core's current revision (docs/core-revisions.md); revision null: none saved, the working copy runs. */
  readonly core: { readonly id: string; readonly revision: string | null; readonly number: number | null } | null;
  readonly sessions: { readonly active: number; readonly archived: number; readonly total: number };
  readonly runs: { readonly live: readonly StatusRun[] };
  readonly approvals: { readonly open: readonly ApprovalEntry[] };
  /** Task counts by status (every kind). */
  readonly tasks: Readonly<Record<string, number>>;
  /** Work counts by kind, then status. */
  readonly work: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Delivery counts by channel, then status. */
  readonly deliveries: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly running: OperatorStatus['running'];
  readonly pendingCompletions: number;
  readonly needsOperator: readonly NeedsOperatorEntry[];
  readonly lastError: OperatorStatus['lastError'];
  /** The core's schedules: next fires and the latest past ones; invalid schedule files as errors. */
  readonly schedules: { readonly schedules: readonly ScheduleOverview[]; readonly errors: readonly string[] };
  /** The MCP servers of the core (`mcp.yaml`) as the host that ran each last reported it: state, restarts, tools. */
  readonly mcpServers: readonly McpServerStatus[];
}

/** `work/<kind>/<status>` keys → kind → status → count (a kind may contain dots, never a slash). */
function splitCounts(all: Record<string, number>, aggregate: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [key, n] of Object.entries(all)) {
    if (!key.startsWith(`${aggregate}/`)) continue;
    const rest = key.slice(aggregate.length + 1);
    const cut = rest.lastIndexOf('/');
    const kind = rest.slice(0, cut);
    const status = rest.slice(cut + 1);
    out[kind] = { ...out[kind], [status]: n };
  }
  return out;
}

function byStatus(byKind: Record<string, Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const statuses of Object.values(byKind)) {
    for (const [status, n] of Object.entries(statuses)) out[status] = (out[status] ?? 0) + n;
  }
  return out;
}

export async function statusCommand(paths: HomePaths, options: { json: boolean }, io: CommandIo): Promise<void> {
  const config: HostConfig = loadConfig(paths.home);
  let checked: StoreFileReport | undefined;
  const store = await openRuntimeStore(paths, {
    mustExist: true,
    synchronous: config.store.synchronous,
    onFileChecked: (report) => {
      checked = report;
    },
  });
  let report: StatusReport;
  try {
    const sessions = await sessionsReader(store).all();
    const runs = runsReader(store);
    const now = Date.now();
    const live = (await runs.live()).map((r) => ({
      ...r,
      leaseExpired: r.leaseUntil === null || Date.parse(r.leaseUntil) <= now,
    }));
    const open = await runs.openApprovals();
    // The operator-status read model itself (what `HostWorkLifecycleRuntime.status()` returns), without
    // wiring the runtimes a read does not need.
    const operator = await operatorStatusReader(store).status();
    const active = sessions.filter((s) => s.status === 'active').length;
    const coreDir = config.core ?? DEFAULT_CORE_DIR;
    const core = await currentCore(store, coreDir);
    report = {
      home: paths.home,
      database: describeStore(store),
      head: await store.head(),
      storeCheck: checked
        ? {
            quickCheck: checked.remembered ? 'remembered' : 'ran',
            integrity: checked.integrity,
            checkedAt: checked.checkedAt,
            durationMs: checked.durationMs,
          }
        : null,
      config: {
        provider: config.provider.name,
        model: config.provider.model ?? null,
        core: config.core ?? null,
      },
      core,
      sessions: { active, archived: sessions.length - active, total: sessions.length },
      runs: { live },
      approvals: { open },
      tasks: byStatus(splitCounts(operator.counts, 'task')),
      work: splitCounts(operator.counts, 'work'),
      deliveries: splitCounts(operator.counts, 'delivery'),
      running: operator.running,
      pendingCompletions: operator.pendingCompletions.length,
      needsOperator: operator.needsOperator,
      lastError: operator.lastError,
      schedules: await scheduleOverview(store, await schedulesDir(paths.home, coreDir, core), now),
      mcpServers: await mcpServerStatus(store),
    };
  } finally {
    await store.close();
  }
  if (options.json) return io.out(JSON.stringify(report));
  for (const line of renderStatus(report, Date.now())) io.out(line);
}

/** The configured core's id and current revision, read from the log (null when the core has no agent.yaml). */
async function currentCore(store: EventStore, dir: string): Promise<StatusReport['core']> {
  const id = readCoreId(resolve(dir));
  if (!id) return null;
  const events = await store.readStream(coreStreamId(id));
  const saved = events.map(asDomainEvent).filter((e) => e.type === 'core.revision_saved');
  const last = saved.at(-1);
  if (last?.type !== 'core.revision_saved') return { id, revision: null, number: null };
  return { id, revision: last.data.revision, number: saved.length };
}

/** Where the schedules hosts tick are: the current revision's checkout (the working copy while there is none). */
async function schedulesDir(home: string, dir: string, core: StatusReport['core']): Promise<string> {
  if (!core?.revision) return dir;
  return new CoreSnapshotStore(coreStoreDir(home)).checkout(core.revision).catch(() => dir);
}

export function renderStatus(r: StatusReport, now: number): string[] {
  const lines = [
    `home      ${r.home}`,
    `log       head ${r.head}`,
    `config    provider ${r.config.provider}${r.config.model ? ` (${r.config.model})` : ''}, core ${r.config.core ?? '(bundled)'}`,
    ...(r.core
      ? [
          `core      ${r.core.id} ${r.core.revision ? `revision #${r.core.number} ${r.core.revision.slice(0, 12)}` : 'no revision saved (the working copy runs)'}`,
        ]
      : []),
    `sessions  ${r.sessions.active} active, ${r.sessions.archived} archived`,
    `runs      ${r.runs.live.length} live`,
  ];
  if (r.runs.live.length > 0) {
    lines.push(
      ...table(
        r.runs.live,
        [
          { heading: 'run', cell: (x) => x.runId },
          { heading: 'session', cell: (x) => x.sessionId },
          { heading: 'status', cell: (x) => x.status },
          { heading: 'owner', cell: (x) => orDash(x.owner) },
          { heading: 'lease', cell: (x) => describeLease(x.leaseUntil, now) },
        ],
        '  ',
      ),
    );
  }
  lines.push(`approvals ${r.approvals.open.length} open`);
  if (r.approvals.open.length > 0) {
    lines.push(
      ...table(
        r.approvals.open,
        [
          { heading: 'approval', cell: (a) => a.approvalId },
          { heading: 'status', cell: (a) => a.status },
          { heading: 'tool', cell: (a) => orDash(a.tool) },
          { heading: 'expires', cell: (a) => orDash(a.expiresAt) },
        ],
        '  ',
      ),
    );
  }
  lines.push(
    `schedules ${r.schedules.schedules.length}${r.schedules.errors.length ? ` (${r.schedules.errors.length} invalid)` : ''}`,
  );
  for (const s of r.schedules.schedules) {
    const next = s.upcoming.map((u) => u.local).join(', ') || '(disabled)';
    const past = s.past.map((p) => `${p.dueAt} ${p.status}`).join(', ') || 'none yet';
    lines.push(`  ${s.scheduleId}  ${s.cron} ${s.timezone}  next: ${next}  past: ${past}`);
  }
  for (const e of r.schedules.errors) lines.push(`  invalid: ${e}`);
  if (r.mcpServers.length > 0)
    lines.push(`mcp       ${r.mcpServers.length} server${r.mcpServers.length === 1 ? '' : 's'}`);
  for (const m of r.mcpServers) {
    const restarts = m.crashes === 0 ? 'no crashes' : `${m.crashes} crash${m.crashes === 1 ? '' : 'es'}`;
    const last = m.lastReason ? `  last: ${shorten(m.lastReason, 60)}` : '';
    lines.push(
      `  ${m.server}  [${m.state}]  ${m.transport} ${shorten(m.target, 40)}  ${m.tools} tools, ${restarts}${last}`,
    );
  }
  lines.push(`tasks     ${counts(r.tasks)}`);
  const work = Object.entries(r.work).sort(([a], [b]) => a.localeCompare(b));
  lines.push(`work      ${work.length === 0 ? 'none' : ''}`.trimEnd());
  for (const [kind, statuses] of work) lines.push(`  ${kind}: ${counts(statuses)}`);
  const deliveries = Object.entries(r.deliveries);
  if (deliveries.length > 0) {
    lines.push('deliveries');
    for (const [channel, statuses] of deliveries) lines.push(`  ${channel}: ${counts(statuses)}`);
  }
  lines.push(`completions pending: ${r.pendingCompletions}`);
  lines.push(`needs operator: ${r.needsOperator.length === 0 ? 'nothing' : r.needsOperator.length}`);
  for (const n of r.needsOperator) {
    lines.push(
      `  ${n.aggregate} ${n.id}  ${n.kind}  [${n.status}]  ${shorten(n.reason, 60)}  (allowed: ${n.allowed.join(', ') || 'none'})`,
    );
  }
  const last = r.lastError as {
    aggregate: string;
    id: string;
    error: { code: string; message: string };
    at: string;
  } | null;
  lines.push(
    last
      ? `last error: ${last.aggregate} ${last.id} at ${last.at}: ${last.error.code}: ${shorten(last.error.message, 80)}`
      : 'last error: none',
  );
  return lines;
}
