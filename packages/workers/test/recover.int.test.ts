import { type ChildProcess, fork, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { currentBootId, type KillFn, processMatches, startMarkerOf } from '../src/index.js';
import { eventually, type Harness, isRunning, openHarness, readPid, streamTypes } from './harness.js';

let h: Harness;
const strays: number[] = [];
afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await h.verify();
  await h.dispose();
});

function countingKill() {
  const sent: [number, NodeJS.Signals | 0][] = [];
  const kill: KillFn = (pid, signal) => {
    sent.push([pid, signal]);
    process.kill(pid, signal);
  };
  return { sent, kill };
}

/** A task that a (previous) worker of `host` started, with a faked process record. */
async function orphan(host: string, process: { pid: number; pgid: number; startMarker?: string; spawnId?: string }) {
  const ref = await h.submit({ command: 'sleep', args: ['60'] });
  await h.controlPlane.startTask(ref, host);
  await h.store.append({
    streamType: 'task',
    streamId: ref.taskId,
    expectedVersion: 2,
    events: [
      {
        type: 'task.process_started',
        data: { taskId: ref.taskId, spawnId: process.spawnId ?? 'spn_fake', host, platform: 'linux', ...process },
      },
    ],
  });
  return ref;
}

describe('recover', () => {
  it('never signals a reused pid: a live process whose start marker differs is left alone', async () => {
    const { sent, kill } = countingKill();
    h = await openHarness({ kill });
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const pid = stranger.pid!;
    strays.push(pid);
    const realMarker = startMarkerOf(pid)!;
    const wrongMarker = `linux:${currentBootId()}:1`;
    expect(realMarker).not.toBe(wrongMarker);
    expect(
      await processMatches({ spawnId: 'x', host: 'h', pid, pgid: pid, platform: 'linux', startMarker: wrongMarker }),
    ).toBe(false);
    const ref = await orphan('host-1', { pid, pgid: pid, startMarker: wrongMarker });

    const report = await h.worker.recover();
    expect(report.settled).toEqual([
      {
        taskId: ref.taskId,
        message:
          `host host-1 stopped while the task was running (settled by host-1); pid ${pid} now belongs to another ` +
          'process (its start marker differs), so it was not signalled',
      },
    ]);
    expect(sent).toEqual([]);
    expect(isRunning(pid)).toBe(true);
    expect(await h.worker.getTask(ref)).toMatchObject({ status: 'failed', error: { code: 'owner_lost' } });
    stranger.kill('SIGKILL');
  });

  it('leaves the tasks of a live other host alone, and settles those of a dead one', async () => {
    h = await openHarness();
    const theirs = await orphan('host-2', { pid: 999_999, pgid: 999_999, startMarker: `linux:${currentBootId()}:5` });
    expect(await h.worker.recover()).toEqual({ settled: [], skipped: [{ taskId: theirs.taskId, owner: 'host-2' }] });
    await expect(h.worker.cancel(theirs, 'stop')).rejects.toThrow(/running on host host-2, not on host-1/);

    await h.reopen({ isHostAlive: (host) => host !== 'host-2' });
    const report = await h.worker.recover();
    expect(report.settled.map((s) => s.taskId)).toEqual([theirs.taskId]);
    expect(report.settled[0]?.message).toContain('its process group 999999 had already exited');
    expect((await h.worker.getTask(theirs)).status).toBe('failed');
  });

  it('after a host is SIGKILLed, a restarted worker kills the orphaned process group and fails the task', async () => {
    h = await openHarness();
    const fixture = join(import.meta.dirname, 'fixtures', 'host.mjs');
    const dist = join(import.meta.dirname, '..', 'dist', 'index.js');
    if (!existsSync(dist)) throw new Error(`build the package first (pnpm run build): ${dist} is missing`);
    const pidFile = join(h.dir, 'grandchild.pid');
    const host: ChildProcess = fork(fixture, [h.path, h.artifactsDir, pidFile], { stdio: 'inherit' });
    const started = await new Promise<{ sessionId: string; taskId: string; pid: number }>((resolve, reject) => {
      host.once('message', (m) => resolve(m as { sessionId: string; taskId: string; pid: number }));
      host.once('exit', (code) => reject(new Error(`the host fixture exited early (${code})`)));
    });
    const grandchild = await readPid(pidFile);
    strays.push(started.pid, grandchild);
    host.kill('SIGKILL');
    await new Promise((resolve) => host.once('exit', resolve));

    // The host is gone; its task still reads active and its process tree still runs, owned by nobody.
    const ref = { sessionId: started.sessionId, taskId: started.taskId };
    expect((await h.worker.getTask(ref)).status).toBe('active');
    expect([isRunning(started.pid), isRunning(grandchild)]).toEqual([true, true]);

    const report = await h.worker.recover();
    expect(report.settled).toHaveLength(1);
    expect(report.settled[0]?.message).toMatch(/its orphaned process group \d+ was stopped with SIGTERM/);
    expect(await eventually(() => !isRunning(started.pid) && !isRunning(grandchild), 2000)).toBe(true);
    expect(await h.worker.getTask(ref)).toMatchObject({
      status: 'failed',
      error: { code: 'owner_lost' },
      completion: 'ready',
    });
    expect((await streamTypes(h.store, ref.taskId)).slice(-2)).toEqual(['task.failed', 'task.completion_ready']);
    // Nothing is left active without an owner.
    expect(await h.controlPlane.listTasks(ref.sessionId, { status: ['active'] })).toEqual([]);
  });
});
