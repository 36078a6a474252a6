import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createIdGenerator, type IdGenerator, systemClock } from '@demiurge/contracts';
import {
  controlPlaneProjectors,
  DurableWorkRuntime,
  RuntimeControlPlane,
  type TaskRef,
  type TaskSpec,
} from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { verifyLog } from '@demiurge/lifecycle';
import type { TaskView } from '@demiurge/projector-task-board';
import { expect } from 'vitest';
import {
  RuntimeTaskWorker,
  type RuntimeTaskWorkerOptions,
  terminalExecHandler,
  workerTaskKinds,
} from '../src/index.js';

/** A worker on a real SQLite file in a temp dir, with the system clock (real processes need real time). */
export interface Harness {
  readonly dir: string;
  readonly path: string;
  readonly artifactsDir: string;
  readonly sessionId: string;
  readonly ids: IdGenerator;
  store: EventStore;
  controlPlane: RuntimeControlPlane;
  worker: RuntimeTaskWorker;
  /** Submits a terminal.exec task; returns its ref. */
  submit(input: Record<string, unknown>, extra?: Partial<TaskSpec>): Promise<TaskRef>;
  /** Submits and starts it. */
  run(input: Record<string, unknown>, extra?: Partial<TaskSpec>): Promise<TaskRef>;
  /** A new worker on the same store and control plane, with these options (the old one is closed). */
  replaceWorker(options: Partial<RuntimeTaskWorkerOptions>): Promise<void>;
  /** A new worker (and store connection) on the same file: a restart of the host. */
  reopen(options?: Partial<RuntimeTaskWorkerOptions>): Promise<void>;
  /** The log must replay cleanly through every machine. */
  verify(): Promise<void>;
  dispose(): Promise<void>;
}

export async function openHarness(options: Partial<RuntimeTaskWorkerOptions> = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'demiurge-workers-'));
  const path = join(dir, 'runtime.sqlite3');
  const artifactsDir = join(dir, 'artifacts');
  const ids = createIdGenerator(systemClock);
  const sessionId = ids.next('ses');
  const build = async (more: Partial<RuntimeTaskWorkerOptions>) => {
    const store = await openSqliteEventStore({ path, projectors: controlPlaneProjectors });
    const host = more.host ?? 'host-1';
    const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: host });
    const controlPlane = new RuntimeControlPlane({ store, clock: systemClock, ids, work, kinds: workerTaskKinds });
    return { store, controlPlane, worker: newWorker(store, controlPlane, host, more) };
  };
  const newWorker = (
    store: EventStore,
    controlPlane: RuntimeControlPlane,
    host: string,
    more: Partial<RuntimeTaskWorkerOptions>,
  ) =>
    new RuntimeTaskWorker({
      store,
      clock: systemClock,
      ids,
      controlPlane,
      host,
      artifactsDir,
      handlers: { 'terminal.exec': terminalExecHandler },
      graceMs: 500,
      ...more,
    });
  const h: Harness = {
    dir,
    path,
    artifactsDir,
    sessionId,
    ids,
    ...(await build(options)),
    async submit(input, extra = {}) {
      const task = await h.controlPlane.submitTask({
        sessionId,
        kind: 'terminal.exec',
        title: String(input.command),
        input,
        ...extra,
      });
      return { sessionId, taskId: task.taskId };
    },
    async run(input, extra) {
      const ref = await h.submit(input, extra);
      await h.worker.start(ref);
      return ref;
    },
    async replaceWorker(more) {
      await h.worker.close();
      h.worker = newWorker(h.store, h.controlPlane, more.host ?? options.host ?? 'host-1', { ...options, ...more });
    },
    async reopen(more = {}) {
      await h.worker.close();
      await h.store.close();
      Object.assign(h, await build({ ...options, ...more }));
    },
    async verify() {
      const report = await verifyLog(h.store.iterate());
      expect(report.violations).toEqual([]);
    },
    async dispose() {
      await h.worker.close();
      await h.store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/**
 * Whether a process runs: `kill(pid, 0)` succeeds and /proc does not show it as a zombie (orphans are reaped
 * late by PID 1 on this VM; a zombie is dead).
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls `check` until it is true or `timeoutMs` passed; returns its last value. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await delay(20);
  }
}

/** Reads a pid a fixture wrote to a file, once it is there. */
export async function readPid(file: string, timeoutMs = 5000): Promise<number> {
  let pid = Number.NaN;
  const ok = await eventually(() => {
    try {
      pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    } catch {
      return false;
    }
    return Number.isInteger(pid) && pid > 0;
  }, timeoutMs);
  if (!ok) throw new Error(`no pid in ${file} after ${timeoutMs} ms`);
  return pid;
}

/** Types of the events of one task stream, in order. */
export async function streamTypes(store: EventStore, taskId: string): Promise<string[]> {
  return (await store.readStream(taskId)).map((e) => e.type);
}

export type { TaskView };
