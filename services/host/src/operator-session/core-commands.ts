import { planModeDecision } from '@demiurge/turn-engine';
import type { SlashContext } from './slash-commands.js';

const short = (revision: string | null | undefined): string => (revision ? revision.slice(0, 12) : 'none');

/**
 * The core commands of the session dialect: `/core` (the current revision), `/versions`, `/evolve GOAL` (an
 * `evolver.run` task of this session) and `/rollback REV` (an older revision made current as a new one).
 * Evolve and rollback change the core: in plan mode they are denied with plan mode's explanation.
 * Returns false for a name that is not one of these.
 */
export async function runCoreCommand(ctx: SlashContext, name: string, args: string): Promise<boolean> {
  const { app } = ctx;
  const source = app.coreSource;
  switch (name) {
    case 'core': {
      const status = await app.coreSource.status();
      ctx.output(
        'core',
        status.revision
          ? `core ${status.id}: revision #${status.number} ${short(status.revision)} is current`
          : `core ${status.id}: no revision saved; the working copy ${app.coreDir} runs`,
      );
      return true;
    }
    case 'versions': {
      const all = (await source.revisions.list()).reverse();
      ctx.output(
        'versions',
        all.length === 0
          ? `core ${source.workingCopy.id}: no revisions yet`
          : [
              'Versions',
              ...all.map(
                (e, i) => `${i === 0 ? '*' : ' '} #${e.number} ${short(e.revision)}  ${e.reason}  ${e.message}`,
              ),
            ].join('\n'),
      );
      return true;
    }
    case 'evolve':
    case 'rollback': {
      if (!args) {
        ctx.output(name, name === 'evolve' ? 'usage: /evolve GOAL' : 'usage: /rollback REV');
        return true;
      }
      const session = await app.runtime.sessions.get(ctx.sessionId());
      const decision = planModeDecision(session.mode, name, 'write.file');
      if (!decision.allowed) {
        ctx.notice(`/${name} changes the Agent Core: ${decision.reason}`, 'warning');
        return true;
      }
      if (name === 'evolve') {
        const task = await app.runtime.controlPlane.submitTask(
          {
            sessionId: session.sessionId,
            kind: 'evolver.run',
            title: `evolve: ${args.length > 72 ? `${args.slice(0, 71)}…` : args}`,
            input: { goal: args },
          },
          { kind: 'operator', id: 'operator' },
        );
        ctx.output('evolve', `evolve task ${task.taskId} submitted; follow it with /task ${task.taskId}`);
        return true;
      }
      const target = await source.revisions.resolve(args).catch((err: Error) => err);
      if (target instanceof Error) {
        ctx.notice(target.message, 'error');
        return true;
      }
      const current = await source.currentEntry();
      if (current?.revision === target.revision) {
        ctx.output('rollback', `revision ${short(target.revision)} is already current`);
        return true;
      }
      const { entry } = await source.revisions.record({
        files: await source.snapshots.files(target.revision),
        message: `rollback to #${target.number} ${short(target.revision)}`,
        reason: 'rollback',
        restoredFrom: target.revision,
        actor: { kind: 'operator', id: 'operator' },
      });
      ctx.output(
        'rollback',
        `rolled back: revision #${entry.number} ${short(entry.revision)} is current from the next turn (${entry.summary})`,
      );
      return true;
    }
    default:
      return false;
  }
}
