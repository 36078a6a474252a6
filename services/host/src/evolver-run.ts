import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type IdGenerator, IdPrefix } from '@demiurge/contracts';
import { taskKindInputs } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { runsReader } from '@demiurge/projector-runs';
import { sessionsReader } from '@demiurge/projector-sessions';
import type { SessionRuntime } from '@demiurge/sessions';
import {
  type CoreCheckReport,
  type CoreFiles,
  checkCore,
  coreFileChanges,
  readCoreFiles,
  revisionOf,
  summarizeChanges,
  writeFiles,
} from '@demiurge/slots';
import type { TurnEngine } from '@demiurge/turn-engine';
import { type RunningTask, runNodeTestFile, type TaskHandler, type TaskOutcome } from '@demiurge/workers';
import type { CoreSource } from './core-source.js';

/** The tools an evolve's child agent gets: the file tools, confined to its working copy. */
export const EVOLVE_TOOLS = ['read_file', 'list_dir', 'write_file', 'edit_file'] as const;

/** The exclusive write scope an evolve of a core holds while it runs: two evolves of one core never overlap. */
export const evolveScope = (coreId: string): string => `evolve:${coreId}`;

/** Where an evolve task's isolated working copy lives. */
export const evolveWorkingCopy = (home: string, taskId: string): string => join(home, 'core-store', 'evolve', taskId);

/**
 * The `evolver.run` task handler: a child agent (the `agent.spawn` machinery: a child session and turn) whose
 * goal is a change to the core, with the file tools confined to an isolated working copy of the current
 * revision (`<home>/core-store/evolve/<taskId>`), holding the exclusive scope `evolve:<core>`. When the child
 * finishes, the working copy is checked (`checkCore`); only a passing check records it as the core's new
 * revision (`core.revision_saved`, reason `evolve`), and only if the current revision is still the one the
 * evolve started from. The task's result says what happened: the new revision and the diff summary, or the
 * check's problems (the working copy is then kept for inspection). Cancelling discards the working copy; after
 * a crash, recovery discards it and the current revision is untouched (a revision is one event, written last).
 */
export function createEvolverRunHandler(deps: {
  readonly store: EventStore;
  readonly sessions: SessionRuntime;
  readonly ids: IdGenerator;
  readonly engine: () => TurnEngine;
  readonly source: CoreSource;
  readonly home: string;
  readonly slotCacheDir?: string;
}): TaskHandler {
  const coreId = deps.source.workingCopy.id;
  return {
    prepare(task) {
      taskKindInputs['evolver.run'].parse(task.input);
      return { exclusiveScope: evolveScope(coreId) };
    },
    async start(ctx) {
      const input = taskKindInputs['evolver.run'].parse(ctx.task.input) as { goal: string };
      const workDir = evolveWorkingCopy(deps.home, ctx.task.taskId);
      const base = await deps.source.currentEntry();
      const baseFiles: CoreFiles = base
        ? await deps.source.snapshots.files(base.revision)
        : await readCoreFiles(deps.source.workingCopy.dir);
      await rm(workDir, { recursive: true, force: true });
      await writeFiles(workDir, baseFiles);
      const parent = await deps.sessions.get(ctx.task.sessionId);
      const child = await deps.sessions.create({
        title: `evolve: ${input.goal.slice(0, 60)}`,
        coreId,
        parent: { sessionId: parent.sessionId, taskId: ctx.task.taskId, depth: (parent.parent?.depth ?? 0) + 1 },
      });
      const runId = deps.ids.next(IdPrefix.run);
      const { admitted, outcome } = deps.engine().startTurn({
        runId,
        sessionId: child.sessionId,
        text:
          `Change the Agent Core "${coreId}" whose files are your workspace (agent.yaml, pipelines.yaml, ` +
          `<phase>/<slot_id>/slot.yaml and module). Goal: ${input.goal}`,
        actor: { kind: 'agent', id: parent.sessionId },
        workspaceRoot: workDir,
        selection: {
          tools: [...EVOLVE_TOOLS],
          inputSlots: ['base_input'],
          outputSlots: ['base_output'],
          bootstrap: false,
        },
      });
      let stopped: string | undefined;
      const finished = outcome.then(
        async (turn): Promise<TaskOutcome> => {
          if (stopped !== undefined || turn.status === 'cancelled') {
            await rm(workDir, { recursive: true, force: true });
            return { status: 'cancelled', reason: stopped ?? turn.text };
          }
          if (turn.status !== 'completed') {
            await rm(workDir, { recursive: true, force: true });
            return {
              status: 'failed',
              error: turn.error ?? {
                code: `child_${turn.status}`,
                message: `the evolve's child turn ended ${turn.status}`,
              },
            };
          }
          return propose({
            workDir,
            baseFiles,
            baseRevision: base?.revision,
            taskId: ctx.task.taskId,
            answer: turn.text,
          });
        },
        async (err: Error): Promise<TaskOutcome> => {
          await rm(workDir, { recursive: true, force: true });
          return { status: 'failed', error: { code: 'child_failed', message: err.message } };
        },
      );
      const propose = async (p: {
        workDir: string;
        baseFiles: CoreFiles;
        baseRevision: string | undefined;
        taskId: string;
        answer: string;
      }): Promise<TaskOutcome> => {
        const report: CoreCheckReport = await checkCore(p.workDir, {
          ...(deps.slotCacheDir ? { cacheDir: deps.slotCacheDir } : {}),
          runTest: runNodeTestFile,
        });
        if (!report.ok) {
          return {
            status: 'failed',
            error: {
              code: 'check_failed',
              message: `the proposed core failed its check, nothing was saved (working copy kept at ${p.workDir}): ${report.problems.join('; ')}`,
            },
          };
        }
        const files = await readCoreFiles(p.workDir);
        const changes = coreFileChanges(p.baseFiles, files);
        if (revisionOf(files) === revisionOf(p.baseFiles)) {
          await rm(p.workDir, { recursive: true, force: true });
          return { status: 'completed', summary: `no change to the core: ${p.answer}` };
        }
        const now = await deps.source.currentEntry();
        if (now?.revision !== p.baseRevision) {
          return {
            status: 'failed',
            error: {
              code: 'core_moved',
              message: `the core's current revision changed while the evolve ran (from ${short(p.baseRevision)} to ${short(now?.revision)}); nothing was saved (working copy kept at ${p.workDir})`,
            },
          };
        }
        const { entry } = await deps.source.revisions.record({
          files,
          message: `evolve ${p.taskId}: ${input.goal}`.slice(0, 500),
          reason: 'evolve',
          taskId: p.taskId,
          actor: { kind: 'agent', id: child.sessionId },
        });
        await rm(p.workDir, { recursive: true, force: true });
        return {
          status: 'completed',
          summary: `saved revision ${short(entry.revision)} of core ${coreId} (${summarizeChanges(changes)}); ${p.answer}`,
        };
      };
      const running: RunningTask = {
        finished,
        async stop(reason) {
          stopped = reason;
          if (
            await admitted.then(
              () => true,
              () => false,
            )
          )
            await deps.engine().cancel(runId, reason);
          return finished;
        },
      };
      return running;
    },
    async recover(task) {
      await rm(evolveWorkingCopy(deps.home, task.taskId), { recursive: true, force: true });
      // Its child run would be resumed into a discarded working copy: it is cancelled instead.
      const children = new Set(
        (await sessionsReader(deps.store).all())
          .filter((s) => s.parent?.taskId === task.taskId)
          .map((s) => s.sessionId),
      );
      for (const run of await runsReader(deps.store).live()) {
        if (children.has(run.sessionId)) {
          await deps.engine().cancel(run.runId, `its evolve task ${task.taskId} ended with its host`);
        }
      }
      return `its working copy was discarded; the current revision of core ${coreId} is unchanged`;
    },
  };
}

const short = (revision: string | undefined): string => (revision ? revision.slice(0, 12) : 'none');
