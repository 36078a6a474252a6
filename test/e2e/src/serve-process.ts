import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { cliBin } from './cli.js';

/** One step of a fake provider script. */
export interface FakeStep {
  readonly content?: string;
  readonly tool_calls?: readonly { name: string; arguments: Record<string, unknown> }[];
}

/**
 * Writes `<home>/config.yaml` for the fake provider (with `script` when given), its workspace `<home>/ws`,
 * and `extra` config lines; returns the workspace.
 */
export function writeHostHome(home: string, options: { script?: readonly FakeStep[]; extra?: string[] } = {}) {
  const workspace = join(home, 'ws');
  mkdirSync(workspace, { recursive: true });
  const lines = ['provider:', '  name: fake'];
  if (options.script) {
    writeFileSync(join(home, 'script.json'), JSON.stringify(options.script));
    lines.push('  fake_script: script.json');
  }
  lines.push(`workspace: ${workspace}`, 'scheduler:', '  enabled: false', 'delivery:', '  poll_ms: 50');
  lines.push(...(options.extra ?? []));
  writeFileSync(join(home, 'config.yaml'), `${lines.join('\n')}\n`);
  return workspace;
}

/** A running `demiurge serve --json` child. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly socket: string;
  /** The ready line, parsed (`http` and `login` with `--http`). */
  readonly ready: Record<string, unknown>;
  stderr(): string;
  /** Sends `signal` and resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `demiurge serve --json --home HOME` (and `extraArgs`) and resolves once it prints its ready line. */
export function startServe(home: string, cwd: string = home, extraArgs: readonly string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [cliBin, 'serve', '--json', '--home', home, ...extraArgs], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop('SIGKILL');
      reject(new Error(`serve printed no ready line: ${stderr}`));
    }, 60_000); // generous: a loaded 2-core CI machine can take many seconds to start a Node process
    void exited.then(() => reject(new Error(`serve exited before it was ready: ${stderr}`)));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      const ready = JSON.parse(stdout.slice(0, newline)) as { socket: string };
      resolve({ child, socket: ready.socket, ready, stderr: () => stderr, stop });
    });
  });
}

/** A raw NDJSON connection to a gateway socket: write lines, read frames. */
export interface RawGateway {
  /** Writes `text` as is (several lines in one write pipeline them). */
  write(text: string): void;
  /** The frame that matches, waiting for it (frames taken are removed). */
  take(match: (frame: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  readonly frames: Record<string, unknown>[];
  close(): void;
}

export function rawGateway(path: string): Promise<RawGateway> {
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection({ path });
    const frames: Record<string, unknown>[] = [];
    let buffer = '';
    const waiters = new Set<() => void>();
    socket.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        frames.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
      }
      for (const w of [...waiters]) w();
    });
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        frames,
        write: (text) => socket.write(text),
        close: () => socket.destroy(),
        take: (match, timeoutMs = 15_000) =>
          new Promise((done, fail) => {
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching frame; got ${JSON.stringify(frames)}`));
            }, timeoutMs);
            const check = () => {
              const i = frames.findIndex(match);
              if (i < 0) return;
              clearTimeout(timer);
              waiters.delete(check);
              done(frames.splice(i, 1)[0]!);
            };
            waiters.add(check);
            check();
          }),
      }),
    );
  });
}

/** A request line. */
export const request = (id: number | string, method: string, params?: unknown) =>
  `${JSON.stringify(params === undefined ? { id, method } : { id, method, params })}\n`;

export const INIT = { protocol_version: 1, client: { name: 'e2e', version: '0.1.0' } };

/** A `demiurge` child whose stderr can be waited on. */
export interface WatchedCli {
  readonly child: ChildProcess;
  /** Resolves with the first match of `pattern` in stderr so far or later. */
  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  readonly exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

const watched = new Set<ChildProcess>();

/** SIGKILLs the {@link watchCli} children still running (a failed test leaves none behind). */
export function killWatched(): void {
  for (const child of watched) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  watched.clear();
}

export function watchCli(args: readonly string[], options: { cwd?: string; stdin?: string } = {}): WatchedCli {
  const child = spawn(process.execPath, [cliBin, ...args], {
    cwd: options.cwd,
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  watched.add(child);
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...waiters]) w();
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    child,
    exited,
    stderrMatch: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stderr never matched ${pattern}: ${stderr}`));
        }, timeoutMs);
        const check = () => {
          const m = stderr.match(pattern);
          if (!m) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        };
        waiters.add(check);
        check();
        void exited.then(() => {
          if (waiters.has(check)) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the process exited; stderr never matched ${pattern}: ${stderr}`));
          }
        });
      }),
  };
}
