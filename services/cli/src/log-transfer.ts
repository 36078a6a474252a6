import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import type { LogAdmin, LogHead, StoredEventRecord } from '@demiurge/event-store';
import { openPostgresLogAdmin } from '@demiurge/event-store-postgres';
import { openSqliteLogAdmin } from '@demiurge/event-store-sqlite';
import { describeStore, type HostStore, openHostStore, type StoreSelection } from '@demiurge/host';
import { runtimeProjectors } from './runtime-store.js';

/** Events per import transaction. */
export const IMPORT_BATCH = 1000;

/** `import` and `migrate` write into an empty store only. */
export class TargetNotEmptyError extends DemiurgeError {
  override readonly name = 'TargetNotEmptyError';
  readonly code = ErrorCode.InvalidAppend;
  constructor(
    readonly where: string,
    readonly head: number,
  ) {
    super(
      `the target store ${where} is not empty (its log has ${head} event(s)); import and migrate write into an empty store only`,
    );
  }
}

/** The log administration of a store: its stored events as they are, and the import of recorded ones. */
export async function openLogAdmin(selection: StoreSelection): Promise<LogAdmin> {
  return selection.kind === 'postgres' ? openPostgresLogAdmin(selection.url) : openSqliteLogAdmin(selection.path);
}

/** Opens a store with the runtime's projectors, runs `fn` and closes it. */
export async function withStore<T>(selection: StoreSelection, fn: (store: HostStore) => Promise<T>): Promise<T> {
  const store = await openHostStore(selection, { projectors: runtimeProjectors });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Opens the target (creating its schema) and refuses it unless its log is empty. */
export async function assertEmptyTarget(selection: StoreSelection): Promise<void> {
  const head = await withStore(selection, (store) => store.head());
  if (head > 0) throw new TargetNotEmptyError(describeStore(selection), head);
}

/**
 * Appends `records` into the (empty) target in batches of {@link IMPORT_BATCH}, each batch one transaction
 * checked for contiguity and the hash chain. A refused batch leaves the batches before it in the target; the
 * error says so.
 */
export async function importInto(
  selection: StoreSelection,
  records: AsyncIterable<StoredEventRecord>,
  onBatch?: (head: LogHead) => void,
): Promise<LogHead> {
  const target = await openLogAdmin(selection);
  try {
    let head = await target.head();
    let batch: StoredEventRecord[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      try {
        head = await target.importRecords(batch);
      } catch (err) {
        if (head.position > 0 && err instanceof DemiurgeError) {
          err.message += `; the ${head.position} event(s) before it were imported: empty the target before importing again`;
        }
        throw err;
      }
      batch = [];
      onBatch?.(head);
    };
    for await (const record of records) {
      batch.push(record);
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    await flush();
    return head;
  } finally {
    await target.close();
  }
}

/** The stored events of a store, in position order. */
export async function* storedRecords(selection: StoreSelection): AsyncGenerator<StoredEventRecord> {
  const source = await openLogAdmin(selection);
  try {
    yield* source.records();
  } finally {
    await source.close();
  }
}
