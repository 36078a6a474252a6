import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdPrefix } from '@demiurge/contracts';
import { StreamVersionConflictError } from '@demiurge/event-store';
import { EvolveClaimLostError } from '@demiurge/slots';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CORE_DIR, DemiurgeApp, evolveWorkingCopy, readCoreFiles, sweepEvolveCopies } from '../src/index.js';

let home: string;
let workspace: string;
let app: DemiurgeApp;
const actor = { kind: 'system', id: 'test' } as const;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-host-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
  const core = join(home, 'core');
  cpSync(DEFAULT_CORE_DIR, core, { recursive: true });
  app = await DemiurgeApp.start({ home, overrides: { workspace, core }, env: {}, background: false });
});
afterEach(async () => {
  await app.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe('the evolve:<core> claim on the core stream (a real SQLite file)', () => {
  it('is fenced by the stream version, registers an unversioned core, and only its holder records a revision', async () => {
    const revisions = app.coreSource.revisions;
    const [first, second] = [app.ids.next(IdPrefix.task), app.ids.next(IdPrefix.task)];
    const free = await revisions.state();
    expect(free).toEqual({ version: 0, registered: false, claim: undefined });
    await revisions.claimEvolve({ taskId: first, host: 'host:a:1:1', after: free, also: [], actor });
    const held = await revisions.state();
    expect(held).toEqual({ version: 2, registered: true, claim: { taskId: first, host: 'host:a:1:1' } });
    // A second host that read the scope free cannot claim it too.
    await expect(
      revisions.claimEvolve({ taskId: second, host: 'host:b:2:2', after: free, also: [], actor }),
    ).rejects.toBeInstanceOf(StreamVersionConflictError);

    const files = await readCoreFiles(app.core.dir);
    const head = await app.store.head();
    const lost = revisions.record({ files, message: 'not mine', reason: 'evolve', heldBy: second, actor });
    await expect(lost).rejects.toBeInstanceOf(EvolveClaimLostError);
    await expect(lost).rejects.toThrow(
      `task ${second} no longer holds the write scope evolve:default (task ${first} holds it)`,
    );
    expect(await revisions.releaseEvolve(second, 'failed', actor)).toBe(false);
    expect(await app.store.head()).toBe(head); // nothing was appended

    const { entry } = await revisions.record({ files, message: 'mine', reason: 'evolve', heldBy: first, actor });
    expect(entry).toMatchObject({ number: 1, parent: null, reason: 'evolve' });
    expect(await revisions.state()).toEqual({ version: 4, registered: true, claim: undefined });
    const stream = await app.store.readStream('core:default');
    expect(stream.map((e) => [e.type, e.position - (stream[0]?.position ?? 0)])).toEqual([
      ['core.registered', 0],
      ['core.evolve_claimed', 1],
      ['core.revision_saved', 2],
      ['core.evolve_released', 3],
    ]);
    expect(stream[2]?.recordedAt).toBe(stream[3]?.recordedAt); // the revision and the release: one commit
  });

  it('a claim whose host is gone expires: the next evolve settles that task and records whom it supersedes', async () => {
    const revisions = app.coreSource.revisions;
    const dead = `host:${hostname()}:99999999:1`; // no such process
    const session = await app.runtime.sessions.create({ title: 't', coreId: 'default' });
    const submit = (goal: string) =>
      app.runtime.controlPlane.submitTask({
        sessionId: session.sessionId,
        kind: 'evolver.run',
        title: goal,
        input: { goal },
      });
    const first = await submit('left by a dead host');
    const ref1 = { sessionId: session.sessionId, taskId: first.taskId };
    await app.runtime.controlPlane.startTask(ref1, dead);
    await revisions.claimEvolve({ taskId: first.taskId, host: dead, after: await revisions.state(), also: [], actor });

    const second = await submit('change nothing');
    const ref2 = { sessionId: session.sessionId, taskId: second.taskId };
    expect((await app.worker.start(ref2)).status).toBe('active');
    const done = await app.worker.wait(ref2, 60_000);
    expect(done.status).toBe('completed');
    expect(done.summary).toMatch(/^no change to the core: /);
    const orphan = await app.worker.getTask(ref1);
    expect(orphan.status).toBe('cancelled');
    expect(orphan.cancelReason).toContain(`its host ${dead} is gone`);
    const scope = (await app.store.readStream('core:default')).filter((e) => e.type.startsWith('core.evolve_'));
    expect(scope.map((e) => [e.type, (e.data as { taskId: string }).taskId])).toEqual([
      ['core.evolve_claimed', first.taskId],
      ['core.evolve_released', first.taskId],
      ['core.evolve_claimed', second.taskId],
      ['core.evolve_released', second.taskId],
    ]);
    expect(scope[2]?.data).toMatchObject({
      host: app.owner,
      supersedes: { taskId: first.taskId, host: dead, why: `its host ${dead} is gone` },
    });
    expect(scope[3]?.data).toMatchObject({ outcome: 'unchanged' });
  }, 90_000);

  it('sweeps the working copies of settled or unknown tasks at start, and keeps those of unfinished ones', async () => {
    const session = await app.runtime.sessions.create({ title: 't', coreId: 'default' });
    const waiting = await app.runtime.controlPlane.submitTask({
      sessionId: session.sessionId,
      kind: 'evolver.run',
      title: 'evolve',
      input: { goal: 'g' },
    });
    const unknown = app.ids.next(IdPrefix.task);
    for (const id of [waiting.taskId, unknown]) mkdirSync(evolveWorkingCopy(home, id), { recursive: true });
    expect(await sweepEvolveCopies(home, app.store)).toEqual([unknown]);
    expect(existsSync(evolveWorkingCopy(home, waiting.taskId))).toBe(true);
    await app.runtime.controlPlane.cancelTask({ sessionId: session.sessionId, taskId: waiting.taskId }, 'not now');
    expect(await sweepEvolveCopies(home, app.store)).toEqual([waiting.taskId]);
    expect(existsSync(evolveWorkingCopy(home, waiting.taskId))).toBe(false);
  });
});
