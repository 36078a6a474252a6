import { createHash } from 'node:crypto';
import { chmod, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';

/** A file a full output stream is written to, with its size and digest kept as it grows. */
export interface ArtifactSink {
  readonly path: string;
  /** Appends a chunk; rejects when it could not be written (the task then fails). */
  write(chunk: Buffer): Promise<void>;
  /** Flushes and closes; resolves with what was written. */
  close(): Promise<{ bytes: number; sha256: string }>;
}

/** Opens an artifact file (created new, mode 0600). Injectable: tests make writes fail. */
export type OpenArtifact = (path: string) => Promise<ArtifactSink>;

/**
 * The default {@link OpenArtifact}: a new file (`wx`, never an existing one) with mode 0600, written in order,
 * hashed with SHA-256 as it is written.
 *
 * @example
 * ```ts
 * const sink = await openArtifactFile('/var/demiurge/artifacts/tsk_1/stdout');
 * await sink.write(Buffer.from('hello\n'));
 * await sink.close(); // { bytes: 6, sha256: '5891b5b5…' }
 * ```
 */
export const openArtifactFile: OpenArtifact = async (path) => {
  const file = await open(path, 'wx', 0o600);
  await file.chmod(0o600); // whatever the umask
  const hash = createHash('sha256');
  let bytes = 0;
  // Writes run one after another, and close waits for the last, so the digest covers every byte written.
  let pending: Promise<unknown> = Promise.resolve();
  let closed: Promise<{ bytes: number; sha256: string }> | undefined;
  const writeAll = async (chunk: Buffer) => {
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await file.write(chunk, offset, chunk.length - offset);
      offset += bytesWritten;
    }
    hash.update(chunk);
    bytes += chunk.length;
  };
  return {
    path,
    write(chunk) {
      if (closed) return Promise.reject(new Error(`artifact ${path} is closed`));
      const written = pending.then(() => writeAll(chunk));
      pending = written.catch(() => undefined);
      return written;
    },
    close() {
      closed ??= (async () => {
        await pending;
        try {
          await file.sync();
        } finally {
          await file.close();
        }
        return { bytes, sha256: hash.digest('hex') };
      })();
      return closed;
    },
  };
};

/**
 * Creates `<artifactsDir>/<taskId>` with mode 0700 (the parent too when missing) and returns it.
 */
export async function taskArtifactDir(artifactsDir: string, taskId: string): Promise<string> {
  await mkdir(artifactsDir, { recursive: true, mode: 0o700 });
  const dir = join(artifactsDir, taskId);
  await mkdir(dir, { mode: 0o700 });
  await chmod(dir, 0o700);
  return dir;
}
