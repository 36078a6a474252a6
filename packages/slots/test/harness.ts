import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { IdGenerator, RecordedEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import { controlPlaneProjectors, DurableWorkRuntime, HostWorkLifecycleRuntime } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { verifyLog } from '@demiurge/lifecycle';
import { sessionsProjector } from '@demiurge/projector-sessions';
import { SessionRuntime } from '@demiurge/sessions';
import {
  type AgentCore,
  BackgroundWorkRuntime,
  createDeliveryIntents,
  type DeliverFn,
  loadCore,
  type SlotLogEntry,
  SlotRunCollections,
  SlotRuntime,
  type SlotRuntimeOptions,
  type SlotRunView,
  slotRunsProjector,
} from '../src/index.js';

/** Writes files (path relative to `dir` → content) and returns `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

const tempDirs: string[] = [];

/** A new temp folder, removed by {@link removeTempDirs} (a harness's `close` calls it). */
export function tempDir(prefix = 'demiurge-slots-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** One slot of a test core: its phase, and its slot.yaml and module.ts texts. */
export interface TestSlot {
  readonly phase: 'bootstrap' | 'input' | 'output';
  readonly yaml?: string;
  readonly module?: string;
  /** Module file name (default module.ts). */
  readonly file?: string;
}

/** The files of a core: agent.yaml, pipelines.yaml from the lanes, and each slot's folder. */
export function coreFiles(
  lanes: {
    bootstrap?: string[];
    input?: string[];
    inputParallel?: string[];
    output?: string[];
    outputParallel?: string[];
  },
  slots: Record<string, TestSlot>,
): Record<string, string> {
  const list = (ids: string[] | undefined) => `[${(ids ?? []).join(', ')}]`;
  const files: Record<string, string> = {
    'agent.yaml': 'id: test\nname: Test core\ninstructions: Be brief.\n',
    'pipelines.yaml': [
      'schema_version: 1',
      'bootstrap:',
      `  serial: ${list(lanes.bootstrap)}`,
      'input:',
      `  serial: ${list(lanes.input)}`,
      `  parallel: ${list(lanes.inputParallel)}`,
      'output:',
      `  serial: ${list(lanes.output)}`,
      `  parallel: ${list(lanes.outputParallel)}`,
      '',
    ].join('\n'),
  };
  for (const [id, slot] of Object.entries(slots)) {
    const file = slot.file ?? 'module.ts';
    files[`${slot.phase}/${id}/slot.yaml`] = slot.yaml ?? `entrypoint: ${file}\ntimeout_seconds: 5\n`;
    files[`${slot.phase}/${id}/${file}`] = slot.module ?? 'export default async () => {};\n';
  }
  return files;
}

export interface Harness {
  readonly dir: string;
  readonly clock: FakeClock;
  readonly ids: IdGenerator;
  readonly store: EventStore;
  readonly sessions: SessionRuntime;
  readonly host: HostWorkLifecycleRuntime;
  readonly background: BackgroundWorkRuntime;
  readonly deliver: DeliverFn;
  readonly logs: SlotLogEntry[];
  /** A SlotRuntime on `core` (a loaded core, or a directory to load). */
  runtime(core: AgentCore | string, options?: Partial<SlotRuntimeOptions>): Promise<SlotRuntime>;
  /** A new session's id. */
  session(binding?: { channel: string; conversationKey: string }): Promise<string>;
  types(filter?: (type: string) => boolean): Promise<string[]>;
  close(): Promise<void>;
}

/** A real SQLite store in a temp folder with the sessions, control-plane and slot-runs projectors. */
export async function openHarness(options: { slotProjector?: boolean } = {}): Promise<Harness> {
  const dir = tempDir();
  const clock = createFakeClock(Date.parse('2026-07-01T09:00:00.000Z'));
  const ids = createSeededIdGenerator(clock, 11);
  const store = await openSqliteEventStore({
    path: join(dir, 'runtime.sqlite3'),
    projectors: [
      sessionsProjector,
      ...controlPlaneProjectors,
      ...(options.slotProjector === false ? [] : [slotRunsProjector]),
    ],
    clock,
    ids,
  });
  const work = new DurableWorkRuntime({ store, clock, ids, owner: 'test-host' });
  const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
  const sessions = new SessionRuntime({ store, ids });
  const background = new BackgroundWorkRuntime({ clock });
  const deliver = createDeliveryIntents({ store, ids, host, sessions });
  const logs: SlotLogEntry[] = [];
  return {
    dir,
    clock,
    ids,
    store,
    sessions,
    host,
    background,
    deliver,
    logs,
    async runtime(core, extra = {}) {
      const loaded = typeof core === 'string' ? await loadCore(core) : core;
      return new SlotRuntime({
        store,
        clock,
        ids,
        core: loaded,
        sessions,
        deliver,
        background,
        onLog: (entry) => logs.push(entry),
        ...extra,
      });
    },
    async session(binding) {
      const view = await sessions.create({
        title: 'test',
        coreId: 'test',
        ...(binding ? { binding: { coreId: 'test', ...binding } } : {}),
      });
      return view.sessionId;
    },
    async types(filter = () => true) {
      return (await store.readAll()).map((e) => e.type).filter(filter);
    },
    async close() {
      const report = await background.drain(10_000);
      const verified = await verifyLog(store.iterate());
      await store.close();
      removeTempDirs();
      if (!report.drained) throw new Error(`background work still running: ${JSON.stringify(report.stillRunning)}`);
      if (!verified.ok) throw new Error(`log violations: ${verified.violations.map((v) => v.message).join('; ')}`);
    },
  };
}

/** The default Agent Core of the repository. */
export const AGENT_DIR = resolve(import.meta.dirname, '../../../agent');

/** A temp core with these lanes and slots. */
export function tempCore(lanes: Parameters<typeof coreFiles>[0], slots: Record<string, TestSlot>): string {
  return writeFiles(tempDir('demiurge-core-'), coreFiles(lanes, slots));
}

/** The `slot_run` events of the log, in order. */
export async function slotEvents(h: Harness): Promise<RecordedEvent[]> {
  return (await h.store.readAll()).filter((e) => e.streamType === 'slot_run');
}

/** The slot runs the `slot-runs` projection holds. */
export function slotRuns(h: Harness): Promise<SlotRunView[]> {
  return h.store.projection(slotRunsProjector.name).list<SlotRunView>(SlotRunCollections.runs);
}

/** The end events (everything but `slot.started`). */
export const ended = (events: readonly RecordedEvent[]) => events.filter((e) => e.type !== 'slot.started');
