import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AppendOptions, AppendStream } from '@demiurge/event-store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createTerminalExecHandler,
  currentBootId,
  type OpenArtifact,
  openArtifactFile,
  TRUNCATION_MARK,
} from '../src/index.js';
import { eventually, type Harness, isRunning, openHarness, readPid, streamTypes } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h.verify();
  await h.dispose();
});

const node = process.execPath;

describe('terminal.exec', () => {
  it('completes on exit 0 and fails with the exit code otherwise, recording process, artifacts and notice', async () => {
    h = await openHarness();
    const ok = await h.run({ command: 'echo', args: ['$HOME', 'and more'] });
    const bad = await h.run({ command: 'sh', args: ['-c', 'echo oops >&2; exit 3'] });
    const shell = await h.run({ command: 'echo "[$1]"', args: ['one arg'], shell: true });
    const silent = await h.run({ command: 'true' }, { notifyPolicy: 'silent' });

    const done = await h.worker.wait(ok, 5000);
    expect(done).toMatchObject({ status: 'completed', exitCode: 0, worker: 'host-1' });
    // No shell unless asked: `$HOME` is passed through literally.
    expect(done.logTail.map((l) => l.text)).toEqual(['$HOME and more']);
    expect(done.process).toMatchObject({ host: 'host-1', platform: 'linux' });
    expect(done.process?.pgid).toBe(done.process?.pid);
    expect(done.process?.spawnId).toMatch(/^spn_/);
    expect(done.process?.startMarker).toMatch(new RegExp(`^linux:${currentBootId()}:\\d+$`));
    expect(done.artifacts.map((a) => [a.name, a.bytes])).toEqual([
      ['stdout', 15],
      ['stderr', 0],
    ]);
    expect(await streamTypes(h.store, ok.taskId)).toEqual([
      'task.submitted',
      'task.started',
      'task.process_started',
      'task.log',
      'task.artifact_recorded',
      'task.artifact_recorded',
      'task.completed',
      'task.completion_ready',
    ]);

    expect(await h.worker.wait(bad, 5000)).toMatchObject({
      status: 'failed',
      exitCode: 3,
      error: { code: 'exit_status', message: 'the process exited with code 3' },
      logTail: [{ stream: 'stderr', text: 'oops' }],
    });
    expect((await h.worker.wait(shell, 5000)).logTail.map((l) => l.text)).toEqual(['[one arg]']);
    expect(await h.worker.wait(silent, 5000)).toMatchObject({ status: 'completed', completion: 'none' });

    // Completion notices: one task.completion work item per announced task, none for the silent one.
    const enqueued = await h.store.readAll({ types: ['work.enqueued'] });
    const subjects = enqueued.map((e) => (e.data as { payload: { taskId: string } }).payload.taskId).sort();
    expect(subjects).toEqual([ok.taskId, bad.taskId, shell.taskId].sort());
    expect(await eventually(() => h.worker.activeTaskIds().length === 0)).toBe(true);
  });

  it('fails a task whose command cannot be started, and one whose input it cannot read', async () => {
    h = await openHarness();
    const missing = await h.submit({ command: 'definitely-not-a-command-xyz' });
    expect(await h.worker.start(missing)).toMatchObject({
      status: 'failed',
      error: { code: 'start_failed', message: expect.stringContaining('ENOENT') },
    });
  });

  it('keeps 200 KB of output in a 0600 artifact and only a bounded, flagged tail in the log', async () => {
    h = await openHarness({ logTailLines: 10 });
    const script =
      "let s=''; for (let i = 0; i < 8000; i++) s += 'line ' + String(i).padStart(6, '0') + ' of the output\\n';" +
      'process.stdout.write(s);';
    const ref = await h.run({ command: node, args: ['-e', script] });
    const view = await h.worker.wait(ref, 10_000);
    expect(view).toMatchObject({ status: 'completed', exitCode: 0 });

    let expected = '';
    for (let i = 0; i < 8000; i++) expected += `line ${String(i).padStart(6, '0')} of the output\n`;
    const stdout = view.artifacts.find((a) => a.name === 'stdout')!;
    expect(stdout.bytes).toBe(208_000);
    expect(stdout.path).toBe(join(h.artifactsDir, ref.taskId, 'stdout'));
    const content = readFileSync(stdout.path);
    expect(content.toString()).toBe(expected);
    expect(createHash('sha256').update(content).digest('hex')).toBe(stdout.sha256);
    expect(stdout.sha256).toBe(createHash('sha256').update(expected).digest('hex'));
    expect(statSync(stdout.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.artifactsDir, ref.taskId)).mode & 0o777).toBe(0o700);

    const logs = await h.worker.logs(ref);
    expect(logs.truncated).toBe(true);
    expect(logs.logEvents).toBeLessThan(50); // not 8,000
    expect(logs.lines.length).toBeLessThanOrEqual(20);
    const texts = logs.lines.map((l) => l.text);
    expect(texts).toContain('line 007999 of the output');
    expect(texts.at(-1)).toMatch(new RegExp(`^\\${TRUNCATION_MARK}: \\d+ of 8000 output lines omitted`));
    expect(texts.at(-1)).toContain('stdout 208000 bytes');
  });

  it('kills the process tree and fails the task when output cannot be persisted', async () => {
    let written = 0;
    const failing: OpenArtifact = async (path) => {
      const sink = await openArtifactFile(path);
      return {
        path,
        close: () => sink.close(),
        async write(chunk) {
          written += chunk.length;
          if (written > 64 * 1024) throw new Error('disk full (injected)');
          await sink.write(chunk);
        },
      };
    };
    h = await openHarness({ handlers: { 'terminal.exec': createTerminalExecHandler({ openArtifact: failing }) } });
    const pidFile = join(h.dir, 'grandchild.pid');
    const ref = await h.run({ command: 'sh', args: ['-c', `sleep 60 & echo $! > ${pidFile}; sleep 1; yes`] });
    const grandchild = await readPid(pidFile);
    const view = await h.worker.wait(ref, 10_000);
    expect(view).toMatchObject({
      status: 'failed',
      error: { code: 'output_persistence_failed', message: expect.stringContaining('disk full (injected)') },
    });
    expect(view.error?.message).toMatch(/process tree stopped with SIGTERM/);
    expect(isRunning(view.process!.pid)).toBe(false);
    expect(isRunning(grandchild)).toBe(false);
    // The broken stdout artifact is not recorded as if it were whole; stderr is.
    expect(view.artifacts.map((a) => a.name)).toEqual(['stderr']);
  });

  it('kills the process tree and fails the task when its log cannot be recorded', async () => {
    h = await openHarness();
    const real = h.store;
    const failingLog = new Proxy(real, {
      get(target, key) {
        if (key === 'append') {
          return (streams: AppendStream | readonly AppendStream[], options?: AppendOptions) => {
            const list = Array.isArray(streams) ? streams : [streams];
            if (list.some((s: AppendStream) => s.events.some((e) => e.type === 'task.log'))) {
              return Promise.reject(new Error('log store unavailable (injected)'));
            }
            return target.append(streams, options);
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await h.replaceWorker({ store: failingLog });
    const pidFile = join(h.dir, 'grandchild.pid');
    const ref = await h.run({ command: 'sh', args: ['-c', `sleep 60 & echo $! > ${pidFile}; echo hello; sleep 60`] });
    const grandchild = await readPid(pidFile);
    const view = await h.worker.wait(ref, 10_000);
    expect(view).toMatchObject({
      status: 'failed',
      error: {
        code: 'output_persistence_failed',
        message: expect.stringMatching(/^recording the log tail failed: log store unavailable \(injected\); /),
      },
    });
    expect(isRunning(view.process!.pid)).toBe(false);
    expect(isRunning(grandchild)).toBe(false);
    expect(view.artifacts.map((a) => a.name)).toEqual(['stdout', 'stderr']);
  });

  it('fails a task that outlives its timeout, after stopping its tree', async () => {
    h = await openHarness();
    const ref = await h.run({ command: 'sleep', args: ['30'], timeoutSeconds: 0.3 });
    const view = await h.worker.wait(ref, 5000);
    expect(view).toMatchObject({ status: 'failed', error: { code: 'timed_out' } });
    expect(view.error?.message).toBe('ran longer than 0.3 s; exit signal SIGTERM; process tree stopped with SIGTERM');
    expect(await eventually(() => !isRunning(view.process!.pid), 1000)).toBe(true);
  });
});
