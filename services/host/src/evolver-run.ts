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
  EvolveClaimLostError,
  type EvolveReleaseOutcome,
  readCoreFiles,
  revisionOf,
  summarizeChanges,
  writeFiles,
} from '@demiurge/slots';
import type { TurnEngine } from '@demiurge/turn-engine';
import { type RunningTask, runNodeTestFile, type TaskHandler, type TaskOutcome } from '@demiurge/workers';
import type { CoreSource } from './core-source.js';
import { discardEvolveCopy, evolveWorkingCopy, recordProposal } from './evolve-copies.js';
import { claimEvolveScope, EVOLVE_SCOPE_ACTOR, type EvolveScopeDeps, evolveScope } from './evolve-scope.js';

export { discardEvolveCopy, evolveWorkingCopy, sweepEvolveCopies } from './evolve-copies.js';
export { evolveScope } from './evolve-scope.js';

/** The tools an evolve's child agent gets: the file tools, confined to its working copy. */
export const EVOLVE_TOOLS = ['read_file', 'list_dir', 'write_file', 'edit_file'] as const;

/**
 * The `evolver.run` task handler: a child agent (the `agent.spawn` machinery: a child session and turn) whose
 * goal is a change to the core, with the file tools confined to an isolated working copy of the current
 * revision (`<home>/core-store/evolve/<taskId>`), holding the exclusive scope `evolve:<core>` — durably, on the
 * core stream, claimed in the commit of its `task.started` ({@link claimEvolveScope}): a second evolve of the
 * core, on this host or another one sharing the store, stays `created` until the claim is released. When the
 * child finishes, the working copy is checked (`checkCore`); only a passing check records it as the core's new
 * revision (`core.revision_saved`, reason `evolve`, with the claim's release in one commit), and only if the
 * current revision is still the one the evolve started from. The task's result says what happened: the new
 * revision and the diff summary, or the check's problems (the proposal kept as the task's `proposal.diff`
 * artifact). The host removes the working copy once the task's ending is recorded (`discardEvolveCopy`), and at
 * start the copies of settled tasks (`sweepEvolveCopies`); after a crash, recovery discards it and the current
 * revision is untouched (a revision is one event, written last).
 */
export function createEvolverRunHandler(deps: {
  readonly store: EventStore;
  readonly isHostAlive: EvolveScopeDeps['isHostAlive'];
  readonly settleOrphan?: EvolveScopeDeps['settleOrphan'];
  readonly sessions: SessionRuntime;
  readonly ids: IdGenerator;
  readonly engine: () => TurnEngine;
  readonly source: CoreSource;
  readonly home: string;
  readonly slotCacheDir?: string;
}): TaskHandler {
  const coreId = deps.source.workingCopy.id;
  const release = (taskId: string, outcome: EvolveReleaseOutcome) =>
    deps.source.revisions.releaseEvolve(taskId, outcome, EVOLVE_SCOPE_ACTOR);
  return {
    prepare(task) {
      taskKindInputs['evolver.run'].parse(task.input);
      return { exclusiveScope: evolveScope(coreId) };
    },
    // Its `task.started` is committed with the claim of `evolve:<core>` (a claim held elsewhere: not started).
    startsTask: true,
    async start(ctx) {
      const input = taskKindInputs['evolver.run'].parse(ctx.task.input) as { goal: string };
      await claimEvolveScope(deps, ctx);
      const workDir = evolveWorkingCopy(deps.home, ctx.task.taskId);
      const prepared = (async () => {
        const base = await deps.source.currentEntry();
        const baseFiles: CoreFiles = base
          ? await deps.source.snapshots.files(base.revision)
          : await readCoreFiles(deps.source.workingCopy.dir);
        await discardEvolveCopy(deps.home, ctx.task.taskId);
        await writeFiles(workDir, baseFiles);
        const parent = await deps.sessions.get(ctx.task.sessionId);
        const child = await deps.sessions.create({
          title: `evolve: ${input.goal.slice(0, 60)}`,
          coreId,
          parent: { sessionId: parent.sessionId, taskId: ctx.task.taskId, depth: (parent.parent?.depth ?? 0) + 1 },
        });
        return { base, baseFiles, parent, child };
      })();
      // Started but unable to begin (the task then fails `start_failed`): the scope is given back first.
      const { base, baseFiles, parent, child } = await prepared.catch(async (error: unknown) => {
        await release(ctx.task.taskId, 'failed').catch(() => undefined); // else it expires with the task's ending
        throw error;
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
      const ended = outcome.then(
        async (turn): Promise<TaskOutcome> => {
          if (stopped !== undefined || turn.status === 'cancelled') {
            await discardEvolveCopy(deps.home, ctx.task.taskId);
            return { status: 'cancelled', reason: stopped ?? turn.text };
          }
          if (turn.status !== 'completed') {
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
        async (err: Error): Promise<TaskOutcome> => ({
          status: 'failed',
          error: { code: 'child_failed', message: err.message },
        }),
      );
      // Whatever the ending, the scope is given back (a saved revision released it in its own commit). A release
      // that fails is not lost: the claim expires anyway once the task's ending is committed.
      const finished = ended.then(async (result) => {
        if (result.status !== 'completed') await release(ctx.task.taskId, result.status).catch(() => undefined);
        return result;
      });
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
        const files = await readCoreFiles(p.workDir);
        // What was proposed outlives the working copy (removed once the task's ending is recorded).
        const kept = async () => `the proposal is kept as ${await recordProposal(ctx, p.baseFiles, files)}`;
        if (!report.ok) {
          return {
            status: 'failed',
            error: {
              code: 'check_failed',
              message: `the proposed core failed its check, nothing was saved (${await kept()}): ${report.problems.join('; ')}`,
            },
          };
        }
        const changes = coreFileChanges(p.baseFiles, files);
        if (revisionOf(files) === revisionOf(p.baseFiles)) {
          await release(p.taskId, 'unchanged');
          return { status: 'completed', summary: `no change to the core: ${p.answer}` };
        }
        const now = await deps.source.currentEntry();
        if (now?.revision !== p.baseRevision) {
          return {
            status: 'failed',
            error: {
              code: 'core_moved',
              message: `the core's current revision changed while the evolve ran (from ${short(p.baseRevision)} to ${short(now?.revision)}); nothing was saved (${await kept()})`,
            },
          };
        }
        let entry: Awaited<ReturnType<typeof deps.source.revisions.record>>['entry'];
        try {
          ({ entry } = await deps.source.revisions.record({
            files,
            message: `evolve ${p.taskId}: ${input.goal}`.slice(0, 500),
            reason: 'evolve',
            taskId: p.taskId,
            heldBy: p.taskId, // fenced: only the holder of evolve:<core> records, releasing it in the same commit
            actor: { kind: 'agent', id: child.sessionId },
          }));
        } catch (error) {
          if (!(error instanceof EvolveClaimLostError)) throw error;
          return { status: 'failed', error: { code: 'claim_lost', message: `${error.message} (${await kept()})` } };
        }
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
      await discardEvolveCopy(deps.home, task.taskId);
      await release(task.taskId, 'failed'); // its claim ends with it
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
