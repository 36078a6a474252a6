import { lstat, mkdir, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { GatewayAlreadyRunningError, UnsafeRuntimeDirError } from './operator-errors.js';

/** Where a host home keeps its operator socket: `<home>/runtime/operator.sock`. */
export function operatorSocketPath(home: string): string {
  return join(home, 'runtime', 'operator.sock');
}

/**
 * Makes sure `dir` is a private directory of this user: created with mode 0700 when absent; refused when it
 * is a symbolic link, not a directory, owned by another user, or writable by group or others (an existing
 * 0755 directory is accepted as is: nobody else can create or replace files in it).
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  let stats = await lstatOrUndefined(dir);
  if (stats === undefined) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    stats = await lstat(dir);
  }
  if (stats.isSymbolicLink()) throw new UnsafeRuntimeDirError(dir, 'is a symbolic link; use the real directory');
  if (!stats.isDirectory()) throw new UnsafeRuntimeDirError(dir, 'is not a directory');
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new UnsafeRuntimeDirError(dir, `is owned by uid ${stats.uid}, not by this user (uid ${uid})`);
  }
  if ((stats.mode & 0o022) !== 0) {
    const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
    throw new UnsafeRuntimeDirError(dir, `is writable by group or others (mode ${mode}); run: chmod 700 ${dir}`);
  }
}

/**
 * Clears the way for a socket at `path`: nothing there is fine; a socket nobody listens on (left by a
 * crashed gateway) is removed; a live socket or any other kind of file is refused.
 */
export async function removeStaleSocket(path: string): Promise<void> {
  const stats = await lstatOrUndefined(path);
  if (stats === undefined) return;
  if (!stats.isSocket()) {
    throw new UnsafeRuntimeDirError(path, 'exists and is not a socket; remove it or choose another path');
  }
  if (await isListening(path)) throw new GatewayAlreadyRunningError(path);
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Whether something accepts connections on the socket. */
function isListening(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (error: NodeJS.ErrnoException) => {
      probe.destroy();
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(false);
      else reject(error);
    });
  });
}
