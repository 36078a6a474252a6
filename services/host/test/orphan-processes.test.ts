import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMarkerOf } from '@demiurge/workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DemiurgeApp } from '../src/index.js';
import { stopOrphanedToolProcesses } from '../src/orphan-processes.js';

let home: string;
let workspace: string;
const children: number[] = [];
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-host-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
});
afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A recorded foreground call of a dead host whose group is `pid`, with the given start marker. */
async function recordCall(app: DemiurgeApp, n: number, pid: number, startMarker: string) {
  const { sessionId } = await app.runtime.sessions.create({ title: 't', coreId: 'default' });
  const toolCallId = `tcl_01JD5Y7Q6N00000000000000${n}0`;
  await app.store.append([
    {
      streamType: 'tool_call',
      streamId: toolCallId,
      expectedVersion: 'no_stream',
      events: [
        {
          type: 'tool_call.requested',
          data: {
            toolCallId,
            sessionId,
            turnId: 'trn_01JD5Y7Q6N0000000000000001',
            stepId: 's1',
            tool: 'shell',
            idempotent: false,
          },
        },
        { type: 'tool_call.started', data: { toolCallId } },
        {
          type: 'tool_call.process_started',
          data: { toolCallId, spawnId: toolCallId, host: 'host:gone', pid, pgid: pid, platform: 'linux', startMarker },
        },
      ],
    },
  ]);
  return toolCallId;
}

describe.runIf(process.platform === 'linux')('stopOrphanedToolProcesses', () => {
  it('stops a dead host’s recorded group only when its start marker matches (a reused pid is never signalled)', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {}, background: false });
    try {
      const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
      const pid = child.pid!;
      children.push(pid);
      const marker = startMarkerOf(pid)!;
      const [, boot, starttime] = marker.split(':');
      // The same pid, another start time: what a reused pid looks like.
      await recordCall(app, 1, pid, `linux:${boot}:${Number(starttime) - 1}`);
      const options = { isHostAlive: () => false, graceMs: 200, owner: 'host:test' };
      expect(await stopOrphanedToolProcesses(app.store, options)).toEqual([]);
      expect(alive(pid)).toBe(true);
      // A live host's group is its own business.
      const mine = await recordCall(app, 2, pid, marker);
      expect(await stopOrphanedToolProcesses(app.store, { ...options, isHostAlive: () => true })).toEqual([]);
      expect(alive(pid)).toBe(true);
      // The very process, its host dead: stopped.
      const exited = new Promise((r) => child.once('exit', r));
      expect(await stopOrphanedToolProcesses(app.store, options)).toEqual([
        { toolCallId: mine, host: 'host:gone', pid, finalSignal: 'SIGTERM' },
      ]);
      await exited;
      const stoppedEvent = (await app.store.readStream(mine)).at(-1)!;
      expect(stoppedEvent).toMatchObject({ type: 'tool_call.process_stopped', data: { pid, signal: 'SIGTERM' } });
      // Recorded: the next start does not look at it again.
      expect(await stopOrphanedToolProcesses(app.store, options)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
