import { backoffMs } from '@demiurge/contracts';
import type pg from 'pg';
import { EVENTS_CHANNEL } from './log-publisher.js';

export interface NotifyListenerOptions {
  /** Makes a new, unconnected client (the store's connection settings). */
  readonly connect: () => pg.Client;
  /** A commit reached this head. */
  readonly onHead: (head: number) => void;
  /** Listening resumed after a lost connection: commits in between sent no notification we received. */
  readonly onReconnected: () => void;
  /** Listening stopped for good: reconnecting kept failing past `giveUpAfterMs`. */
  readonly onLost: (err: unknown) => void;
  /** How long to keep reconnecting before giving up. Default 60 000 ms. */
  readonly giveUpAfterMs?: number;
}

/**
 * The store's LISTEN connection: one dedicated client (a pooled one would be handed to other queries), woken
 * by the NOTIFY every append sends at commit. A lost connection is reopened with backoff; the store then reads
 * whatever was committed meanwhile, so nothing is skipped.
 */
export class NotifyListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private reconnecting: Promise<void> | undefined;

  constructor(private readonly options: NotifyListenerOptions) {}

  /** Connects and listens; rejects when the first connection fails. */
  async start(): Promise<void> {
    await this.listen();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.reconnecting?.catch(() => {});
    await this.client?.end().catch(() => {});
  }

  private async listen(): Promise<void> {
    const client = this.options.connect();
    client.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL && n.payload !== undefined) this.options.onHead(Number(n.payload));
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.stopped || client !== this.client || this.reconnecting) return;
    this.client = undefined;
    this.reconnecting = this.reconnect().finally(() => {
      this.reconnecting = undefined;
    });
  }

  private async reconnect(): Promise<void> {
    const started = Date.now();
    const giveUp = this.options.giveUpAfterMs ?? 60_000;
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.listen();
        if (!this.stopped) this.options.onReconnected();
        return;
      } catch (err) {
        if (Date.now() - started > giveUp) {
          this.options.onLost(err);
          return;
        }
        await new Promise((r) => setTimeout(r, backoffMs(attempt + 1, { baseMs: 50, maxMs: 2000, jitter: 'none' })));
      }
    }
  }
}
