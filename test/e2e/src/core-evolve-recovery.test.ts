import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnDemiurge } from './cli.js';
import { addShoutSlot, coreHome, eventsOf, makeBaseOutputWait, until } from './core-home.js';
import { type ServeProcess, startServe } from './serve-process.js';

interface TaskJson {
  taskId: string;
  status: string;
  error: { code: string; message: string } | null;
  cancelReason: string | null;
}

let h: ReturnType<typeof coreHome> | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  h?.remove();
  h = undefined;
});

/** A served home whose evolve "slow change" is caught mid-way: working copy written, child waiting in base_output. */
async function evolveCaughtMidway() {
  h = coreHome();
  const { cli, json, home, workspace, core } = h;
  makeBaseOutputWait(core);
  await cli('init');
  await cli('core', 'save');
  const revisions = (await json<{ revisions: unknown[] }>('core', 'versions')).revisions.length;
  serve = await startServe(home, workspace);
  const task = await json<TaskJson>('core', 'evolve', 'slow change', '--no-wait');
  const workingCopy = join(home, 'core-store', 'evolve', task.taskId);
  await until(
    () => eventsOf(home),
    (events) => events.some((e) => e.type === 'turn.model_responded' && e.data.content === 'hold on'),
  );
  expect(existsSync(join(workingCopy, 'input', 'half', 'slot.yaml'))).toBe(true);
  return { ...h, task, workingCopy, revisions };
}

describe('evolver.run: cancel and crash never half-apply (real host processes)', () => {
  it('cancelling a running evolve stops its child and discards its working copy', async () => {
    const { cli, json, task, workingCopy, revisions } = await evolveCaughtMidway();
    expect((await cli('tasks', 'cancel', task.taskId, '--reason', 'not now')).code).toBe(0);
    await until(
      async () => (await json<{ task: TaskJson }>('tasks', 'show', task.taskId)).task,
      (t) => t.status === 'cancelled',
    );
    await until(
      async () => existsSync(workingCopy),
      (exists) => !exists,
    );
    expect((await json<{ revisions: unknown[] }>('core', 'versions')).revisions).toHaveLength(revisions);
  }, 180_000);

  it('a SIGKILL mid-evolve leaves the current revision untouched; the next host discards the working copy', async () => {
    const { cli, json, home, workspace, task, workingCopy, revisions } = await evolveCaughtMidway();
    const current = (await json<{ current: string }>('core', 'versions')).current;
    await serve?.stop('SIGKILL');
    expect(existsSync(workingCopy)).toBe(true); // what the crash left: recoverable, never applied
    expect((await json<{ current: string }>('core', 'versions')).current).toBe(current);

    serve = await startServe(home, workspace);
    const after = await until(
      async () => (await json<{ task: TaskJson }>('tasks', 'show', task.taskId)).task,
      (t) => t.status === 'failed',
    );
    expect(after.error?.message).toContain(
      'its working copy was discarded; the current revision of core default is unchanged',
    );
    expect(existsSync(workingCopy)).toBe(false);
    const versions = await json<{ current: string; revisions: unknown[] }>('core', 'versions');
    expect(versions.current).toBe(current);
    expect(versions.revisions).toHaveLength(revisions);
    // Its child run is cancelled, not resumed into a discarded working copy.
    await until(
      () => json<{ runs: { status: string }[] }>('runs', 'list'),
      (r) => r.runs.every((run) => ['completed', 'cancelled', 'failed'].includes(run.status)),
    );
    await serve.stop('SIGTERM');
    serve = undefined;
    expect((await cli('verify')).code).toBe(0);
  }, 180_000);

  it('a run resumed by the next host continues on its pinned revision, though another one became current', async () => {
    h = coreHome();
    const { cli, home, workspace, core } = h;
    await cli('init');
    await cli('core', 'save');
    addShoutSlot(core);
    expect((await cli('core', 'save', '--message', 'shout')).code).toBe(0);
    serve = await startServe(home, workspace);
    const client = spawnDemiurge(['run', 'very slow turn', '--home', home]);
    await until(
      () => eventsOf(home),
      (events) => events.some((e) => e.type === 'tool_call.started'),
    );
    expect((await cli('core', 'rollback', '#1')).code).toBe(0); // no shout slot from the next admission on
    await serve.stop('SIGKILL');
    client.child.kill('SIGKILL');
    serve = await startServe(home, workspace);
    const events = await until(
      () => eventsOf(home),
      (all) => all.some((e) => e.type === 'turn.completed'),
    );
    const answer = events.filter((e) => e.type === 'message.recorded' && e.data.role === 'assistant').at(-1);
    expect(answer?.data.text).toBe('[FAKE] VERY SLOW TURN'); // the resumed turn ran its pinned revision's slots
  }, 180_000);

  it('a run whose pinned revision is gone is not resumed on another one: the host says why', async () => {
    h = coreHome();
    const { cli, home, workspace } = h;
    await cli('init');
    await cli('core', 'save');
    serve = await startServe(home, workspace);
    const client = spawnDemiurge(['run', 'very slow turn', '--home', home]);
    await until(
      () => eventsOf(home),
      (events) => events.some((e) => e.type === 'tool_call.started'),
    );
    await serve.stop('SIGKILL');
    client.child.kill('SIGKILL');
    rmSync(join(home, 'core-store'), { recursive: true, force: true });
    serve = await startServe(home, workspace);
    const deadline = Date.now() + 30_000;
    while (!serve.stderr().includes('pinned to revision') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(serve.stderr()).toMatch(
      /recovering run run_\w+: the turn is pinned to revision [0-9a-f]{12} of core default, whose snapshot is gone/,
    );
    expect(serve.stderr()).toContain('it is not resumed on another revision');
  }, 180_000);
});
