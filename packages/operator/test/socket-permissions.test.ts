import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectOperator, GatewayAlreadyRunningError, serveUnixSocket, UnsafeRuntimeDirError } from '../src/index.js';
import { fakeBackend } from './fake-backend.js';
import { INIT } from './harness.js';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('socket permissions', () => {
  let home: string;
  const { backend } = fakeBackend();
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'dmo-perm-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('creates the runtime directory 0700 and the socket 0600', async () => {
    const path = join(home, 'nested', 'runtime', 'operator.sock');
    const server = await serveUnixSocket({ path, backend });
    expect(mode(join(home, 'nested', 'runtime'))).toBe(0o700);
    expect(statSync(path).isSocket()).toBe(true);
    expect(mode(path)).toBe(0o600);
    await server.close();
  });

  it('accepts an existing private directory without changing it', async () => {
    const dir = join(home, 'runtime');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const server = await serveUnixSocket({ path: join(dir, 'operator.sock'), backend });
    expect(mode(dir)).toBe(0o755);
    await server.close();
  });

  it('refuses a symlinked runtime directory', async () => {
    const real = join(home, 'elsewhere');
    mkdirSync(real, { mode: 0o700 });
    symlinkSync(real, join(home, 'runtime'));
    const error = await serveUnixSocket({ path: join(home, 'runtime', 'operator.sock'), backend }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnsafeRuntimeDirError);
    expect((error as Error).message).toMatch(/runtime is a symbolic link/);
    expect(existsSync(join(real, 'operator.sock'))).toBe(false);
  });

  it.each([0o770, 0o707, 0o777])('refuses a runtime directory with mode %o (group or other writable)', async (bits) => {
    const dir = join(home, 'runtime');
    mkdirSync(dir);
    chmodSync(dir, bits);
    await expect(serveUnixSocket({ path: join(dir, 'operator.sock'), backend })).rejects.toThrow(
      /writable by group or others.*chmod 700/,
    );
    expect(existsSync(join(dir, 'operator.sock'))).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)('refuses a runtime directory owned by another user', async () => {
    const dir = join(home, 'runtime');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 4242, 4242);
    await expect(serveUnixSocket({ path: join(dir, 'operator.sock'), backend })).rejects.toThrow(/owned by uid 4242/);
  });

  it('refuses a path that is a regular file', async () => {
    const dir = join(home, 'runtime');
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'operator.sock'), 'not a socket');
    await expect(serveUnixSocket({ path: join(dir, 'operator.sock'), backend })).rejects.toThrow(/is not a socket/);
  });

  it('refuses a socket another gateway listens on', async () => {
    const dir = join(home, 'runtime');
    mkdirSync(dir, { mode: 0o700 });
    const path = join(dir, 'operator.sock');
    const other = createServer().listen(path);
    await new Promise((r) => other.once('listening', r));
    await expect(serveUnixSocket({ path, backend })).rejects.toBeInstanceOf(GatewayAlreadyRunningError);
    await new Promise((r) => other.close(r));
  });

  it('replaces a stale socket left by a killed gateway', async () => {
    const dir = join(home, 'runtime');
    mkdirSync(dir, { mode: 0o700 });
    const path = join(dir, 'operator.sock');
    const script = `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
    spawnSync(process.execPath, ['-e', script]);
    expect(statSync(path).isSocket()).toBe(true);
    const server = await serveUnixSocket({ path, backend });
    const client = await connectOperator(path);
    await expect(client.request('operator.initialize', INIT)).resolves.toMatchObject({ protocol_version: 1 });
    await client.close();
    await server.close();
  });
});
