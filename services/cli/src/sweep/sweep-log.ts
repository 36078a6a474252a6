import type { RecordedEvent } from '@demiurge/contracts';
import { openSqliteEventStore, type SqliteEventStore } from '@demiurge/event-store-sqlite';
import { type DeliveryView, outboxProjector, outboxReader } from '@demiurge/projector-outbox';
import { type RunView, runsProjector, runsReader } from '@demiurge/projector-runs';
import { type TaskView, taskBoardProjector, taskBoardReader } from '@demiurge/projector-task-board';
import { type WorkItemView, workItemsProjector, workItemsReader } from '@demiurge/projector-work-items';

/** The read models the sweep's checks look at (every other projector is left to the host). */
const PROJECTORS = [runsProjector, taskBoardProjector, workItemsProjector, outboxProjector];

/**
 * What the sweep reads of a home's store, next to a serving host (SQLite in WAL mode: readers never block its
 * writer): the log and the read models the checks need. The store is opened on first use (after the host made
 * it) and stays open across a crash and restart of the host; nothing is ever appended through it.
 */
export class SweepLog {
  private store: Promise<SqliteEventStore> | undefined;

  constructor(readonly path: string) {}

  private open(): Promise<SqliteEventStore> {
    this.store ??= openSqliteEventStore({ path: this.path, projectors: PROJECTORS });
    return this.store;
  }

  /** Every event of the log, or of the given types, in order. */
  async events(...types: string[]): Promise<RecordedEvent[]> {
    return (await this.open()).readAll(types.length > 0 ? { types } : {});
  }

  /** The events of one stream, in order (empty when it does not exist). */
  async stream(streamId: string): Promise<RecordedEvent[]> {
    return (await this.open()).readStream(streamId);
  }

  async runs(): Promise<RunView[]> {
    return runsReader(await this.open()).all();
  }

  async run(runId: string): Promise<RunView | undefined> {
    return runsReader(await this.open()).get(runId);
  }

  async tasks(): Promise<TaskView[]> {
    return taskBoardReader(await this.open()).all();
  }

  async workItems(): Promise<WorkItemView[]> {
    return workItemsReader(await this.open()).all();
  }

  async deliveries(): Promise<DeliveryView[]> {
    return outboxReader(await this.open()).deliveries.list();
  }

  async close(): Promise<void> {
    const store = this.store;
    this.store = undefined;
    if (store) await (await store.catch(() => undefined))?.close();
  }
}
