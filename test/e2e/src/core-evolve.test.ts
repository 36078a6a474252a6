import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnDemiurge } from './cli.js';
import { assistantTexts, coreHome, eventsOf, turnPins, until } from './core-home.js';
import { type ServeProcess, startServe } from './serve-process.js';

interface VersionsJson {
  current: string | null;
  revisions: { revision: string; parent: string | null; number: number; reason: string; taskId?: string }[];
}
interface TaskJson {
  taskId: string;
  status: string;
  summary: string | null;
  error: { code: string; message: string } | null;
}

let h: ReturnType<typeof coreHome> | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  h?.remove();
  h = undefined;
});

describe('evolver.run: a child agent changes the core, saved only if its check passes (real CLI)', () => {
  it('a broken evolve changes nothing; one that adds a slot is saved and the next turn runs with it; rollback restores behaviour', async () => {
    h = coreHome();
    const { cli, json, home } = h;
    await cli('init');
    await cli('core', 'save', '--message', 'base');
    const base = (await json<VersionsJson>('core', 'versions')).current as string;

    const broken = await cli('core', 'evolve', 'break a slot');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/failed: check_failed: the proposed core failed its check, nothing was saved/);
    expect(broken.stderr).toContain('slot base_output');
    expect((await json<VersionsJson>('core', 'versions')).revisions).toHaveLength(1);
    // What failed is recorded (the problems, the proposal as the task's artifact), then its working copy goes.
    const brokenId = /evolve (tsk_\w+) failed/.exec(broken.stderr)?.[1] as string;
    const proposal = /the proposal is kept as (\S+proposal\.diff)/.exec(broken.stderr)?.[1] as string;
    expect(readFileSync(proposal, 'utf8')).toContain('output/base_output/module.ts');
    expect(existsSync(join(home, 'core-store', 'evolve', brokenId))).toBe(false);
    // A copy a killed host left behind for a settled task is removed at the next host start.
    mkdirSync(join(home, 'core-store', 'evolve', brokenId, 'output'), { recursive: true });

    const evolved = await json<TaskJson>('core', 'evolve', 'add a shout slot');
    expect(evolved.status).toBe('completed');
    expect(evolved.summary).toMatch(/^saved revision [0-9a-f]{12} of core default \(\+2 ~1 -0: /);
    const versions = await json<VersionsJson>('core', 'versions');
    const shouting = versions.current as string;
    expect(versions.revisions[0]).toMatchObject({ number: 2, reason: 'evolve', parent: base, taskId: evolved.taskId });
    // The working copy is the user's: an evolve changes revisions, not it.
    expect((await json<{ clean: boolean }>('core', 'status')).clean).toBe(false);

    expect((await cli('run', 'next')).code).toBe(0);
    expect(existsSync(join(home, 'core-store', 'evolve', brokenId))).toBe(false);
    const rolled = await cli('core', 'rollback', base.slice(0, 8));
    expect(rolled.stdout).toContain('rolled back');
    expect((await cli('run', 'after')).code).toBe(0);
    const texts = await assistantTexts(home);
    expect(texts.slice(-2)).toEqual(['[FAKE] NEXT', '[fake] after']);
    const pins = (await turnPins(home)).slice(-2);
    expect(pins.map((p) => p.revision)).toEqual([shouting, base]);
    expect(pins[0]?.slots.map((s) => s.id)).toContain('shout');
    expect(pins[1]?.slots.map((s) => s.id)).not.toContain('shout');
    expect((await cli('verify')).code).toBe(0);
  }, 180_000);

  it('a turn already running finishes on the revision it was admitted with; the next one runs the new revision', async () => {
    h = coreHome();
    const { cli, json, home } = h;
    await cli('init');
    await cli('core', 'save', '--message', 'base');
    const base = (await json<VersionsJson>('core', 'versions')).current as string;
    await json('core', 'evolve', 'add a shout slot');
    const shouting = (await json<VersionsJson>('core', 'versions')).current as string;

    const slow = spawnDemiurge(['run', 'slow turn', '--home', home]);
    await until(
      () => eventsOf(home),
      (events) => events.some((e) => e.type === 'tool_call.started'),
    );
    expect((await cli('core', 'rollback', '#1')).code).toBe(0); // while the slow turn runs its `sleep 3`
    const done = await slow.exited;
    expect(done.code).toBe(0);
    expect((await cli('run', 'next')).code).toBe(0);
    // The fake plays the conversation's next step ("slow done"): upper-cased only by the old revision's slot.
    expect((await assistantTexts(home)).slice(-2)).toEqual(['SLOW DONE', 'slow done']);
    expect((await turnPins(home)).slice(-2).map((p) => p.revision)).toEqual([shouting, base]);
  }, 180_000);

  it('two evolves submitted together are serialised by the evolve:<core> write scope', async () => {
    h = coreHome();
    const { cli, json, home, workspace } = h;
    await cli('init');
    await cli('core', 'save');
    const a = await json<TaskJson>('core', 'evolve', 'add a shout slot', '--no-wait');
    const b = await json<TaskJson>('core', 'evolve', 'add a tag slot', '--no-wait');
    expect([a.status, b.status]).toEqual(['created', 'created']);
    serve = await startServe(home, workspace);
    const ended = async (id: string) => (await json<{ task: TaskJson }>('tasks', 'show', id)).task;
    await until(
      async () => [await ended(a.taskId), await ended(b.taskId)],
      (tasks) => tasks.every((t) => ['completed', 'failed', 'cancelled'].includes(t.status)),
    );
    expect((await ended(a.taskId)).status).toBe('completed');
    expect((await ended(b.taskId)).status).toBe('completed');
    const events = await eventsOf(home);
    const at = (type: string, id: string) => events.find((e) => e.type === type && e.streamId === id)?.position ?? -1;
    // The second started only after the first had ended: never both on one base revision.
    expect(at('task.started', b.taskId)).toBeGreaterThan(at('task.completed', a.taskId));
    const versions = (await json<VersionsJson>('core', 'versions')).revisions;
    expect(versions.map((v) => [v.reason, v.taskId])).toEqual([
      ['evolve', b.taskId],
      ['evolve', a.taskId],
      ['save', undefined],
    ]);
    expect(versions[0]?.parent).toBe(versions[1]?.revision);
  }, 180_000);
});
