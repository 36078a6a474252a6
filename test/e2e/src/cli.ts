import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
/** The built `demiurge` binary of the workspace's CLI package. */
export const cliBin = join(dirname(require.resolve('@demiurge/cli/package.json')), 'dist', 'bin.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `demiurge <args>` as a real child process. */
export function demiurge(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function tempHome(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'demiurge-home-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** `demiurge <args>` whose stdout is one JSON document: parsed, with the exit code and stderr. */
export async function demiurgeJson<T = Record<string, unknown>>(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stderr: string; json: T }> {
  const run = await demiurge([...args, '--json'], env);
  if (run.code !== 0) throw new Error(`demiurge ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return { code: run.code, stderr: run.stderr, json: JSON.parse(run.stdout) as T };
}

/** A long-running `demiurge` child (`events --follow`): its lines as they come, stdin open until closed. */
export interface RunningCli {
  readonly child: ChildProcess;
  /** Resolves with the stdout lines once there are at least `n`. */
  lines(n: number, timeoutMs?: number): Promise<string[]>;
  /** Resolves with the exit code and the output once the process has exited. */
  readonly exited: Promise<CliResult>;
}

export function spawnDemiurge(args: readonly string[]): RunningCli {
  const child = spawn(process.execPath, [cliBin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  const complete = () => stdout.split('\n').filter((l, i, all) => i < all.length - 1 && l !== '');
  return {
    child,
    exited,
    lines: (n, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${n} line(s); stdout: ${stdout} stderr: ${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          if (complete().length >= n) {
            clearTimeout(timer);
            resolve(complete());
          } else waiters.push(check);
        };
        check();
      }),
  };
}
