import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from './cli.js';
import { ServedHome } from './served-home.js';
import { verifyHome } from './store-checks.js';

let served: ServedHome | undefined;
const pids: number[] = [];
afterEach(async () => {
  await served?.dispose();
  served = undefined;
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL'); // a failed test must not leave its sleep behind
    } catch {}
  }
});

/** Whether a process runs (a zombie does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = (() => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return '';
    }
  })();
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state !== '' && state !== 'Z' && state !== 'X';
}

async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A long foreground shell call that writes its own pid (`exec` keeps the shell's pid: the group leader). */
const longShell = {
  content: 'Running the long job.',
  tool_calls: [{ name: 'shell', arguments: { command: 'echo $$ > job.pid; exec sleep 300', timeout_seconds: 600 } }],
};

async function startLongShell(): Promise<{ pid: number; toolCallId: string; turnId: string }> {
  served = await ServedHome.start({ script: [longShell, { content: 'done' }] });
  const client = await served.gateway();
  const ids = await client.request('operator.submit', { text: 'run the long job' });
  const call = await served.toolCall(ids.turn_id, (d) => d.tool === 'shell');
  const pidFile = join(served.home.workspace, 'job.pid');
  await until('the job to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  pids.push(pid);
  return { pid, toolCallId: call.streamId, turnId: ids.turn_id };
}

describe('a foreground shell call in its own process group, recorded before it runs', () => {
  it('an orphan left by a SIGKILLed host is stopped by the next host start', async () => {
    const { pid, toolCallId } = await startLongShell();
    // Its group is recorded (with the start marker) before the command ran.
    const record = served!.reader.stream(toolCallId).find((e) => e.type === 'tool_call.process_started');
    expect(record?.data).toMatchObject({
      pid,
      pgid: pid,
      spawnId: toolCallId,
      startMarker: expect.stringMatching(/^linux:/),
    });

    await served!.stop('SIGKILL');
    await sleep(300);
    expect(alive(pid)).toBe(true); // the killed host left it running: an orphan

    await served!.restart();
    await until('the orphan to be stopped', () => !alive(pid));
    await served!.reader.waitFor(
      'the call to settle',
      (e) => e.streamId === toolCallId && e.type === 'tool_call.unknown',
    );
    expect(served!.types(toolCallId)).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.process_started',
      'tool_call.process_stopped',
      'tool_call.unknown',
    ]);
    const stopped = served!.reader.stream(toolCallId).find((e) => e.type === 'tool_call.process_stopped');
    expect(stopped?.data).toMatchObject({ pid, signal: 'SIGTERM', reason: expect.stringContaining('died') });
    await served!.stop('SIGTERM');
    expect(await verifyHome(served!.home.dir)).toMatchObject({ ok: true, problems: [] });
  }, 60_000);

  it('is stopped when its host closes (SIGTERM)', async () => {
    const { pid } = await startLongShell();
    expect(alive(pid)).toBe(true);
    const exit = await served!.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(alive(pid)).toBe(false);
  }, 60_000);
});
