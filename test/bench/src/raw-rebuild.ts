import type Database from 'better-sqlite3';
import {
  type BenchData,
  incremented,
  type LastEventDoc,
  lastEvent,
  REBUILD_PROJECTOR as P,
  rebuildProjectors,
} from './fixtures.js';
import { EVENT_COLUMNS, GET_DOCUMENT, openRaw, UPSERT_DOCUMENT } from './raw-db.js';

interface Row {
  position: number;
  stream_id: string;
  stream_version: number;
  type: string;
  data: string;
}

/**
 * The raw baseline of a rebuild: clears the three projectors' documents, then reads the log in
 * keyset batches by position with prepared statements, parses each event's data and makes the
 * same document reads and upserts as the store's projectors, one transaction per batch.
 * Returns the number of events applied.
 */
export function rawRebuild(path: string, batchSize: number, onProgress: (applied: number) => void): number {
  const db = openRaw(path, 'FULL');
  try {
    return replay(db, batchSize, onProgress);
  } finally {
    db.close();
  }
}

function replay(db: Database.Database, batchSize: number, onProgress: (applied: number) => void): number {
  const select = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`);
  const getDoc = db.prepare(GET_DOCUMENT).pluck();
  const upsert = db.prepare(UPSERT_DOCUMENT);
  const setCheckpoint = db.prepare('UPDATE projector_checkpoints SET position = ? WHERE name = ?');
  const clear = db.prepare('DELETE FROM projection_documents WHERE projector = ?');
  const names = rebuildProjectors.map((p) => p.name);

  const read = <T>(projector: string, collection: string, id: string): T | undefined => {
    const doc = getDoc.get(projector, collection, id) as string | undefined;
    return doc === undefined ? undefined : (JSON.parse(doc) as T);
  };
  const write = (projector: string, collection: string, id: string, doc: unknown) =>
    upsert.run(projector, collection, id, JSON.stringify(doc));

  db.transaction(() => {
    for (const name of names) {
      clear.run(name);
      setCheckpoint.run(0, name);
    }
  }).immediate();

  const batch = db.transaction((after: number): { count: number; last: number } => {
    const rows = select.all(after, batchSize) as Row[];
    for (const row of rows) {
      const data = JSON.parse(row.data) as BenchData;
      write(P.streamCounter, 'streams', row.stream_id, incremented(read(P.streamCounter, 'streams', row.stream_id)));
      write(P.typeCounter, 'types', row.type, incremented(read(P.typeCounter, 'types', row.type)));
      const prev = read<LastEventDoc>(P.lastEvent, 'last', row.stream_id);
      write(P.lastEvent, 'last', row.stream_id, lastEvent(row.position, row.stream_version, data.seq, prev));
    }
    const last = rows.length > 0 ? rows[rows.length - 1]!.position : after;
    for (const name of names) setCheckpoint.run(last, name);
    return { count: rows.length, last };
  });

  let after = 0;
  let applied = 0;
  for (;;) {
    const step = batch.immediate(after);
    applied += step.count;
    after = step.last;
    onProgress(applied);
    if (step.count < batchSize) return applied;
  }
}
