import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';

/** The built CLI the bench runs (services/cli/dist/bin.js, bundled by its build; a dependency, so built first). */
export const CLI_BIN = join(
  dirname(createRequire(import.meta.url).resolve('@demiurge/cli/package.json')),
  'dist',
  'bin.js',
);
/** test/bench: where `better-sqlite3` resolves for the baseline. */
export const BENCH_DIR = join(import.meta.dirname, '..', '..');

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The environment of a CLI run without the runtime's code cache (`DEMIURGE_CODE_CACHE=off`): every start parses
 * and compiles the runtime, as on a first run.
 */
export const NO_CODE_CACHE: NodeJS.ProcessEnv = { ...process.env, DEMIURGE_CODE_CACHE: 'off' };

/** Wall time of one whole process, spawn to exit, in ms; throws when it fails. */
export function wallMs(args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: BENCH_DIR, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

/** Runs `demiurge <args>` to the end and returns its stdout; throws when it fails. */
export function demiurge(args: readonly string[]): string {
  const run = spawnSync(process.execPath, [CLI_BIN, ...args], { cwd: BENCH_DIR, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`demiurge ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

/** A `demiurge serve` child: how long until its socket accepted a connection, and its log lines. */
export interface ServingHost {
  readonly child: ChildProcess;
  /** Spawn to the first accepted connection on `<home>/runtime/operator.sock`, ms. */
  readonly acceptedMs: number;
  /** stderr so far (the JSON log with --log-json). */
  stderr(): string;
  /** SIGTERM, then the exit. */
  stop(): Promise<void>;
}

/** Starts `demiurge serve --home <home> --provider fake --log-json` and waits until its socket accepts. */
export async function startServe(
  home: string,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
): Promise<ServingHost> {
  const socket = join(home, 'runtime', 'operator.sock');
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_BIN, 'serve', '--home', home, '--provider', 'fake', '--log-json'], {
    cwd: BENCH_DIR,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  while (!(await accepts(socket))) {
    if (gone) throw new Error(`demiurge serve exited before its socket accepted: ${err}`);
    if (performance.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`demiurge serve did not accept on ${socket} within ${timeoutMs} ms: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const acceptedMs = performance.now() - started;
  return {
    child,
    acceptedMs,
    stderr: () => err,
    stop: async () => {
      if (!gone) child.kill('SIGTERM');
      await exited;
    },
  };
}

function accepts(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(socket);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
