import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { DemiurgeApp } from '@demiurge/host';
import { operatorSocketPath } from '@demiurge/operator';
import { type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { SessionRuntime } from '@demiurge/sessions';
import { ExclusiveScopeBusyError } from '@demiurge/workers';
import { ExitCode } from '../cli-errors.js';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import { cliRuntime } from '../runtime.js';
import { withRuntimeStore } from '../runtime-store.js';
import { type CoreEvolveOptions, coreDirOf, coreIdOf } from './core.js';
import { cliUser } from './host-client.js';

const FINAL = ['completed', 'failed', 'cancelled'];

/**
 * `demiurge core evolve GOAL`: submits an `evolver.run` task in a new session. A host serving the home runs
 * it (this command waits for it on the log); without one, a host in this process runs just that task and
 * closes. `--no-wait` only submits (a serving host, or the next one, runs it). The task is `silent`: this
 * command (or `tasks show`) reports it; no completion turn runs in its session.
 */
export async function coreEvolve(goal: string, o: CoreEvolveOptions, io: CommandIo): Promise<ExitCode> {
  const paths = resolveHome(o.home);
  const dir = coreDirOf(paths, o.core);
  const coreId = coreIdOf(dir);
  const title = `evolve: ${goal.length > 72 ? `${goal.slice(0, 71)}…` : goal}`;
  if (!o.wait || (await serving(paths.home))) {
    const task = await withRuntimeStore(paths, async (store) => {
      const admin = cliRuntime(store);
      const sessions = new SessionRuntime({ store, ids: admin.ids });
      const session = await sessions.create({ title, coreId });
      return admin.controlPlane.submitTask(
        { sessionId: session.sessionId, kind: 'evolver.run', title, input: { goal }, notifyPolicy: 'silent' },
        cliUser(),
      );
    });
    if (!o.wait) return report(task, o, io, true);
    io.err(`demiurge: task ${task.taskId} submitted; the host serving ${paths.home} runs it`);
    return report(await waitOnLog(paths, task.taskId), o, io);
  }
  const app = await DemiurgeApp.start({
    home: paths.home,
    overrides: {
      core: dir,
      ...(o.fakeScript ? { fakeScript: o.fakeScript } : {}),
      ...(o.workspace ? { workspace: o.workspace } : {}),
    },
    background: false,
    completionTurns: false,
  });
  try {
    const session = await app.runtime.sessions.create({ title, coreId });
    const task = await app.runtime.controlPlane.submitTask(
      { sessionId: session.sessionId, kind: 'evolver.run', title, input: { goal }, notifyPolicy: 'silent' },
      cliUser(),
    );
    const ref = { sessionId: session.sessionId, taskId: task.taskId };
    await startWhenFree(app, ref, io);
    return report(await app.worker.wait(ref, 24 * 3600_000), o, io);
  } finally {
    await app.close();
  }
}

/**
 * Starts the task once no other evolve of the core holds `evolve:<core>` (another process may run one on this
 * home): it waits, saying so once, instead of failing.
 */
async function startWhenFree(app: DemiurgeApp, ref: { sessionId: string; taskId: string }, io: CommandIo) {
  let told = false;
  for (;;) {
    try {
      return await app.worker.start(ref);
    } catch (error) {
      if (!(error instanceof ExclusiveScopeBusyError)) throw error;
      if (!told) io.err(`demiurge: waiting: ${error.message}`);
      told = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

function report(task: TaskView, o: CoreEvolveOptions, io: CommandIo, submittedOnly = false): ExitCode {
  if (o.json) {
    io.out(
      JSON.stringify({
        taskId: task.taskId,
        sessionId: task.sessionId,
        status: task.status,
        summary: task.summary,
        error: task.error,
        cancelReason: task.cancelReason,
      }),
    );
  } else if (submittedOnly) io.out(`submitted evolve task ${task.taskId} (session ${task.sessionId})`);
  else if (task.status === 'completed') io.out(`evolve ${task.taskId} completed: ${task.summary ?? ''}`);
  else if (task.status === 'failed')
    io.err(`demiurge: evolve ${task.taskId} failed: ${task.error?.code}: ${task.error?.message}`);
  else io.err(`demiurge: evolve ${task.taskId} ${task.status}${task.cancelReason ? `: ${task.cancelReason}` : ''}`);
  return submittedOnly || task.status === 'completed' ? ExitCode.ok : ExitCode.failure;
}

async function waitOnLog(paths: ReturnType<typeof resolveHome>, taskId: string): Promise<TaskView> {
  for (;;) {
    const task = await withRuntimeStore(paths, async (store) => taskBoardReader(store).get(taskId));
    if (task && FINAL.includes(task.status)) return task;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Whether a host serves the home (its operator socket accepts connections). */
function serving(home: string): Promise<boolean> {
  const path = operatorSocketPath(home);
  if (!existsSync(path)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
