import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, jsonOption, nonEmpty } from '../options.js';
import type { CoreEvolveOptions, CoreOptions, CoreSaveOptions } from './core.js';

const load = () => import('./core.js');
const evolve = () => import('./core-evolve.js');

const coreOptions = (command: Command): Command =>
  command
    .addOption(homeOption())
    .option('--core <dir>', 'the Agent Core working copy (default: config.yaml core, else the bundled agent/)');

/** `demiurge core status|versions|check|save|diff|discard|rollback|evolve` (implementation: `core.ts`). */
export function registerCore(program: Command, ctx: CommandContext): void {
  const core = program
    .command('core')
    .description('Agent Core revisions: status, versions, check, save, diff, discard, rollback, evolve');
  coreOptions(core.command('status').description('the working copy against the current revision'))
    .addOption(jsonOption())
    .action(action(ctx, async (o: CoreOptions) => (await load()).coreStatus(o, ctx.io)));
  coreOptions(core.command('versions').description("the core's revisions, newest first (* marks the current one)"))
    .addOption(jsonOption())
    .action(action(ctx, async (o: CoreOptions) => (await load()).coreVersions(o, ctx.io)));
  coreOptions(
    core
      .command('check')
      .description("validate the working copy: the loader, every slot module's import, the core's own tests"),
  ).action(action(ctx, async (o: CoreOptions) => (await load()).coreCheck(o, ctx.io)));
  coreOptions(core.command('save').description('record the working copy as a new revision, only if check passes'))
    .option('--message <text>', 'why (recorded with the revision)', nonEmpty('--message'))
    .action(action(ctx, async (o: CoreSaveOptions) => (await load()).coreSave(o, ctx.io)));
  coreOptions(
    core
      .command('diff')
      .description('changes from the current revision to the working copy (or from REV, or from REV to REV2)')
      .argument('[rev]', 'a revision (id prefix or #number)')
      .argument('[rev2]', 'a second revision'),
  ).action(
    action(ctx, async (rev: string | undefined, rev2: string | undefined, o: CoreOptions) =>
      (await load()).coreDiff(rev, rev2, o, ctx.io),
    ),
  );
  coreOptions(core.command('discard').description('restore the working copy to the current revision')).action(
    action(ctx, async (o: CoreOptions) => (await load()).coreDiscard(o, ctx.io)),
  );
  coreOptions(
    core
      .command('rollback')
      .description('make an older revision current again, as a new revision')
      .argument('<rev>', 'the revision to restore (id prefix or #number)'),
  )
    .option('--message <text>', 'why (recorded with the revision)', nonEmpty('--message'))
    .action(action(ctx, async (rev: string, o: CoreSaveOptions) => (await load()).coreRollback(rev, o, ctx.io)));
  coreOptions(
    core
      .command('evolve')
      .description('an evolver.run task: a child agent changes the core; saved only if check passes')
      .argument('<goal>', 'the change to make'),
  )
    .option('--fake-script <file>', 'a fake provider script (YAML or JSON steps)')
    .option('--workspace <dir>', 'the host workspace (default: the current directory)')
    .option('--no-wait', 'submit the task and return its id without waiting for it')
    .addOption(jsonOption())
    .action(action(ctx, async (goal: string, o: CoreEvolveOptions) => (await evolve()).coreEvolve(goal, o, ctx.io)));
}
