import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  CoreCheckFailedError,
  type CoreFiles,
  CoreRevisions,
  CoreSnapshotStore,
  checkCore,
  coreFileChanges,
  coreStoreDir,
  DEFAULT_CORE_DIR,
  type HostStore,
  loadConfig,
  type RevisionEntry,
  readCoreFiles,
  restoreFiles,
  revisionOf,
  summarizeChanges,
  unifiedDiff,
} from '@demiurge/host';
import { runNodeTestFile } from '@demiurge/workers';
import { ExitCode, UsageError } from '../cli-errors.js';
import { readCoreId } from '../core-dir.js';
import { type HomePaths, resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { HomeOptions } from '../options.js';
import { withRuntimeStore } from '../runtime-store.js';
import { cliUser } from './host-client.js';

export interface CoreOptions extends HomeOptions {
  readonly core?: string;
  readonly json?: boolean;
}

export interface CoreSaveOptions extends CoreOptions {
  readonly message?: string;
}

export interface CoreEvolveOptions extends CoreOptions {
  readonly wait: boolean;
  readonly fakeScript?: string;
  readonly workspace?: string;
}

/** The working copy a `core` command works on: `--core`, else `core:` in config.yaml, else the bundled core. */
export function coreDirOf(paths: HomePaths, flag: string | undefined): string {
  return resolve(flag ?? loadConfig(paths.home).core ?? DEFAULT_CORE_DIR);
}

/** The core's id from its agent.yaml (read leniently: a core whose check fails still has one). */
export function coreIdOf(dir: string): string {
  if (!existsSync(join(dir, 'agent.yaml'))) {
    throw new UsageError(`${dir} is not an Agent Core: it has no agent.yaml (pass --core <dir>)`);
  }
  const id = readCoreId(dir);
  if (!id) throw new UsageError(`${join(dir, 'agent.yaml')} has no "id:" line; every core has an id`);
  return id;
}

interface OpenCore {
  readonly paths: HomePaths;
  readonly dir: string;
  readonly coreId: string;
  readonly revisions: CoreRevisions;
  readonly store: HostStore;
}

/** Runs `fn` with the home's store and the configured core's revisions; the store is closed after. */
export async function withCore<T>(o: CoreOptions, fn: (core: OpenCore) => Promise<T>): Promise<T> {
  const paths = resolveHome(o.home);
  const dir = coreDirOf(paths, o.core);
  const coreId = coreIdOf(dir);
  return withRuntimeStore(paths, (store) => {
    const revisions = new CoreRevisions({ store, snapshots: new CoreSnapshotStore(coreStoreDir(paths.home)), coreId });
    return fn({ paths, dir, coreId, revisions, store });
  });
}

const short = (revision: string): string => revision.slice(0, 12);
const EMPTY: CoreFiles = new Map();

async function currentFiles(revisions: CoreRevisions, current: RevisionEntry | undefined): Promise<CoreFiles> {
  return current ? revisions.snapshots.files(current.revision) : EMPTY;
}

const describeEntry = (e: RevisionEntry): string =>
  `#${e.number} ${short(e.revision)}  ${e.recordedAt}  ${e.reason}  ${e.actor.kind}:${e.actor.id}  ${e.message}`;

/** `demiurge core status`: the current revision and how the working copy differs from it. */
export async function coreStatus(o: CoreOptions, io: CommandIo): Promise<void> {
  await withCore(o, async ({ dir, coreId, revisions }) => {
    const current = await revisions.current();
    const working = await readCoreFiles(dir);
    const changes = coreFileChanges(await currentFiles(revisions, current), working);
    const clean = current !== undefined && revisionOf(working) === current.revision;
    if (o.json) {
      return io.out(
        JSON.stringify({
          coreId,
          dir,
          revision: current?.revision ?? null,
          number: current?.number ?? null,
          savedAt: current?.recordedAt ?? null,
          message: current?.message ?? null,
          workingRevision: revisionOf(working),
          clean,
          changes,
        }),
      );
    }
    io.out(`core      ${coreId} (${dir})`);
    io.out(
      current ? `revision  ${describeEntry(current)}` : 'revision  none saved yet: the host runs the working copy',
    );
    if (clean) return io.out('working   clean (the working copy is the current revision)');
    io.out(`working   ${current ? 'modified' : 'unsaved'}: ${summarizeChanges(changes)}`);
    for (const path of changes.added) io.out(`  A ${path}`);
    for (const path of changes.changed) io.out(`  M ${path}`);
    for (const path of changes.removed) io.out(`  D ${path}`);
  });
}

/** `demiurge core versions`: every revision, newest first. */
export async function coreVersions(o: CoreOptions, io: CommandIo): Promise<void> {
  await withCore(o, async ({ coreId, revisions }) => {
    const all = (await revisions.list()).reverse();
    const current = all[0]?.revision ?? null;
    if (o.json) return io.out(JSON.stringify({ coreId, current, revisions: all }));
    if (all.length === 0) return io.out(`core ${coreId}: no revisions yet (save one with "demiurge core save")`);
    for (const e of all) {
      io.out(`${e === all[0] ? '*' : ' '} ${describeEntry(e)}${e.summary ? `  (${e.summary})` : ''}`);
    }
  });
}

/** `demiurge core check`: the loader, every slot module's import, the core's tests; nothing changes. */
export async function coreCheck(o: CoreOptions, io: CommandIo): Promise<ExitCode> {
  const paths = resolveHome(o.home);
  const dir = coreDirOf(paths, o.core);
  const report = await checkCore(dir, { cacheDir: join(paths.home, 'cache', 'slots'), runTest: runNodeTestFile });
  if (report.ok) {
    io.out(
      `core ${report.coreId} (${report.dir}): check passed: ${report.slots.length} slot modules imported, ${report.tests.length} test files passed`,
    );
    return ExitCode.ok;
  }
  io.err(`demiurge: core check failed (${dir}):`);
  for (const problem of report.problems) io.err(`  ${problem}`);
  return ExitCode.failure;
}

/** `demiurge core save`: check, then record the working copy as the new current revision. */
export async function coreSave(o: CoreSaveOptions, io: CommandIo): Promise<void> {
  await withCore(o, async ({ paths, dir, revisions }) => {
    const report = await checkCore(dir, { cacheDir: join(paths.home, 'cache', 'slots'), runTest: runNodeTestFile });
    if (!report.ok) throw new CoreCheckFailedError(dir, report.problems);
    const { entry, changed } = await revisions.record({
      files: await readCoreFiles(dir),
      message: o.message ?? `saved from ${dir}`,
      reason: 'save',
      actor: cliUser(),
    });
    if (!changed)
      return io.out(`nothing to save: the working copy is revision #${entry.number} ${short(entry.revision)}`);
    io.out(`saved revision #${entry.number} ${short(entry.revision)} (${entry.summary ?? 'first revision'})`);
  });
}

/** `demiurge core diff [rev] [rev2]`. */
export async function coreDiff(
  rev: string | undefined,
  rev2: string | undefined,
  o: CoreOptions,
  io: CommandIo,
): Promise<void> {
  await withCore(o, async ({ dir, revisions }) => {
    const filesOf = async (ref: string) => revisions.snapshots.files((await revisions.resolve(ref)).revision);
    const from = rev ? await filesOf(rev) : await currentFiles(revisions, await revisions.current());
    const to = rev2 ? await filesOf(rev2) : await readCoreFiles(dir);
    const lines = unifiedDiff(from, to);
    if (lines.length === 0) return io.out('no differences');
    for (const line of lines) io.out(line);
  });
}

/** `demiurge core discard`: the working copy back to the current revision. */
export async function coreDiscard(o: CoreOptions, io: CommandIo): Promise<void> {
  await withCore(o, async ({ dir, coreId, revisions }) => {
    const current = await revisions.current();
    if (!current) {
      throw new UsageError(`core ${coreId} has no saved revision to restore; save one first ("demiurge core save")`);
    }
    const files = await revisions.snapshots.files(current.revision);
    const changes = coreFileChanges(files, await readCoreFiles(dir));
    await restoreFiles(dir, files);
    io.out(
      `restored ${dir} to revision #${current.number} ${short(current.revision)} (discarded: ${summarizeChanges(changes)})`,
    );
  });
}

/** `demiurge core rollback REV`: REV's snapshot becomes current as a new revision. */
export async function coreRollback(rev: string, o: CoreSaveOptions, io: CommandIo): Promise<void> {
  await withCore(o, async ({ dir, revisions }) => {
    const target = await revisions.resolve(rev);
    const current = await revisions.current();
    if (current?.revision === target.revision) {
      return io.out(`revision ${short(target.revision)} is already current (#${current.number}); nothing to do`);
    }
    const files = await revisions.snapshots.files(target.revision);
    const wasClean = current !== undefined && revisionOf(await readCoreFiles(dir)) === current.revision;
    const { entry } = await revisions.record({
      files,
      message: o.message ?? `rollback to #${target.number} ${short(target.revision)}`,
      reason: 'rollback',
      restoredFrom: target.revision,
      actor: cliUser(),
    });
    io.out(`rolled back: revision #${entry.number} ${short(entry.revision)} is current (${entry.summary})`);
    if (wasClean) {
      await restoreFiles(dir, files);
      io.out(`working copy ${dir} restored to it`);
    } else {
      io.out(
        `working copy ${dir} has unsaved changes and was left as it is ("demiurge core discard" takes the rollback)`,
      );
    }
  });
}
