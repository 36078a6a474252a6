import { existsSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreHome, EVOLVE_SCRIPT, eventsOf, type LoggedEvent, until } from './core-home.js';
import { killWatched, watchCli } from './serve-process.js';

interface VersionsJson {
  current: string | null;
  revisions: { revision: string; parent: string | null; reason: string; taskId?: string }[];
}
interface TaskJson {
  taskId: string;
  status: string;
  summary: string | null;
  error: { code: string; message: string } | null;
  cancelReason: string | null;
}

/** "held shout": the shout slot written, then an answer ("hold on") that base_output holds while a file exists. */
const HELD_SCRIPT = [
  { match: 'held shout', tool_calls: EVOLVE_SCRIPT[0]?.tool_calls },
  { match: 'held shout', content: 'hold on, the shout slot is added' },
  ...EVOLVE_SCRIPT,
];

let h: ReturnType<typeof coreHome> | undefined;
afterEach(() => {
  killWatched();
  h?.remove();
  h = undefined;
});

/**
 * A home whose saved core holds an answer containing "hold on" in base_output while `<tmp>/hold` exists; then
 * host A (`demiurge core evolve "held shout"`, a host in its own process: no host serves the home) claims
 * evolve:default and is caught mid-way, its proposal written, its child's answer held.
 */
async function hostAHoldingTheScope() {
  h = coreHome(HELD_SCRIPT);
  const { cli, json, home, core, tmp } = h;
  const hold = join(tmp, 'hold');
  rmSync(join(core, 'output', 'base_output', 'module.ts'));
  writeFileSync(
    join(core, 'output', 'base_output', 'module.mjs'),
    [
      "import { existsSync } from 'node:fs';",
      'export default async function baseOutput(ctx) {',
      "  if (ctx.output.response_text.includes('hold on')) {",
      `    while (existsSync(${JSON.stringify(hold)}) && !ctx.signal.aborted) await new Promise((r) => setTimeout(r, 100));`,
      '  }',
      '  await ctx.output.send_text(ctx.output.response_text);',
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(core, 'output', 'base_output', 'slot.yaml'),
    'entrypoint: module.mjs\ntimeout_seconds: 120\nfailure_policy: hard\ncapabilities: [deliver]\n',
  );
  writeFileSync(hold, '');
  expect((await cli('init')).code).toBe(0);
  expect((await cli('core', 'save', '--message', 'base')).code).toBe(0);
  const base = (await json<VersionsJson>('core', 'versions')).current as string;
  const a = watchCli(['core', 'evolve', 'held shout', '--json', '--home', home]);
  const events = await until(
    () => eventsOf(home),
    (all) =>
      all.some((e) => e.type === 'core.evolve_claimed') &&
      all.some((e) => e.type === 'turn.model_responded' && String(e.data.content).startsWith('hold on')),
    90_000,
  );
  const claimA = events.find((e) => e.type === 'core.evolve_claimed') as LoggedEvent;
  return { ...h, hold, base, a, taskA: claimA.data.taskId as string };
}

const byType = (events: readonly LoggedEvent[], type: string) => events.filter((e) => e.type === type);

describe('evolve:<core> is one durable claim across hosts sharing a store (real CLI processes)', () => {
  it('a second host waits for the first evolve to give the scope back, then saves on top of its revision', async () => {
    const { cli, json, home, hold, base, a, taskA } = await hostAHoldingTheScope();
    // Host B: another `core evolve` process on the same SQLite file while A holds evolve:default.
    const b = watchCli(['core', 'evolve', 'add a tag slot', '--json', '--home', home]);
    const waiting = await b.stderrMatch(
      /waiting: task (tsk_\w+) needs exclusive write access to evolve:default, but task (tsk_\w+) is running/,
      60_000,
    );
    expect(waiting[2]).toBe(taskA);
    const taskB = waiting[1] as string;
    expect((await json<{ task: TaskJson }>('tasks', 'show', taskB)).task.status).toBe('created');

    unlinkSync(hold); // A's child answers; A checks and saves, releasing the scope in the same commit
    const [doneA, doneB] = await Promise.all([a.exited, b.exited]);
    expect(doneA.code, doneA.stderr).toBe(0);
    expect(doneB.code, doneB.stderr).toBe(0);
    expect((JSON.parse(doneA.stdout) as TaskJson).status).toBe('completed');
    expect((JSON.parse(doneB.stdout) as TaskJson).status).toBe('completed');

    const versions = (await json<VersionsJson>('core', 'versions')).revisions;
    expect(versions.map((v) => [v.reason, v.taskId])).toEqual([
      ['evolve', taskB],
      ['evolve', taskA],
      ['save', undefined],
    ]);
    expect(versions[1]?.parent).toBe(base);
    expect(versions[0]?.parent).toBe(versions[1]?.revision); // B ran on A's revision: never core_moved
    const events = await eventsOf(home);
    const core = events.filter((e) => e.streamId === 'core:default').map((e) => [e.type, e.data.taskId ?? null]);
    expect(core).toEqual([
      ['core.registered', null],
      ['core.revision_saved', null],
      ['core.evolve_claimed', taskA],
      ['core.revision_saved', taskA],
      ['core.evolve_released', taskA],
      ['core.evolve_claimed', taskB],
      ['core.revision_saved', taskB],
      ['core.evolve_released', taskB],
    ]);
    const at = (type: string, id: string) => events.find((e) => e.type === type && e.streamId === id)?.position;
    expect(at('task.started', taskB)).toBeGreaterThan(byType(events, 'core.evolve_released')[0]?.position ?? 0);
    expect(readdirSync(join(home, 'core-store', 'evolve'))).toEqual([]);
    const verified = await cli('verify'); // the core stream's claims and releases follow the core machine
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 240_000);

  it('a claim whose host was SIGKILLed expires with it: the next host settles that task and takes the scope', async () => {
    const { cli, json, home, a, taskA, base } = await hostAHoldingTheScope();
    a.child.kill('SIGKILL');
    await a.exited;
    expect(existsSync(join(home, 'core-store', 'evolve', taskA))).toBe(true); // what the crash left
    const b = watchCli(['core', 'evolve', 'add a tag slot', '--json', '--home', home]);
    const doneB = await b.exited;
    expect(doneB.code, doneB.stderr).toBe(0);
    const taskB = (JSON.parse(doneB.stdout) as TaskJson).taskId;
    const first = (await json<{ task: TaskJson }>('tasks', 'show', taskA)).task;
    expect(['failed', 'cancelled']).toContain(first.status);
    expect(existsSync(join(home, 'core-store', 'evolve', taskA))).toBe(false);
    const versions = (await json<VersionsJson>('core', 'versions')).revisions;
    expect(versions.map((v) => [v.reason, v.taskId, v.parent])).toEqual([
      ['evolve', taskB, base],
      ['save', undefined, null],
    ]);
    const claims = byType(await eventsOf(home), 'core.evolve_claimed').map((e) => e.data.taskId);
    expect(claims).toEqual([taskA, taskB]);
    expect((await cli('verify')).code).toBe(0);
  }, 240_000);
});
