import { join } from 'node:path';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

/**
 * Synchronous queries on PostgreSQL for the crash tests' log reader, which is synchronous (as better-sqlite3
 * is): a worker thread holds the connection, and the caller blocks on a shared flag until the answer is posted.
 * Test code only: blocking the test process is fine, the hosts are other processes.
 */
export class SyncPg {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));

  constructor(url: string) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(join(import.meta.dirname, '..', 'fixtures', 'pg-sync-worker.mjs'), {
      workerData: { url, port: port2, flag: this.flag.buffer },
      transferList: [port2],
    });
    this.worker.unref();
  }

  /** The rows of one statement; throws the server's message on an error, or after 30 s without an answer. */
  query<T>(sql: string, params: readonly unknown[] = []): T[] {
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ sql, params });
    if (Atomics.wait(this.flag, 0, 0, 30_000) === 'timed-out') throw new Error(`no answer in 30 s to: ${sql}`);
    const reply = receiveMessageOnPort(this.port)?.message as { rows?: T[]; error?: string } | undefined;
    if (!reply) throw new Error(`no answer to: ${sql}`);
    if (reply.error !== undefined) throw new Error(`${reply.error} (in: ${sql})`);
    return reply.rows ?? [];
  }

  close(): void {
    this.port.close();
    void this.worker.terminate();
  }
}
