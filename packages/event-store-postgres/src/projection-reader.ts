import type { ListOptions, ProjectionReader, Projector } from '@demiurge/event-store';
import { type Kysely, sql } from 'kysely';
import type { ProjectorRunner } from './projector-runner.js';
import type { StoreSchema } from './schema.js';

/** Read access to one projector's documents outside the append transaction (read committed). */
export function createProjectionReader(
  projector: Projector,
  deps: {
    db: Kysely<StoreSchema>;
    runner: ProjectorRunner;
    /** Runs a read, refusing a closed store and naming a lost connection. */
    read: <T>(work: () => Promise<T>) => Promise<T>;
    head: () => Promise<number>;
  },
): ProjectionReader {
  const { db, runner, read } = deps;
  const rows = (collection?: string, options?: ListOptions) =>
    read(() => {
      let query = db
        .selectFrom('projection_documents')
        .select(['collection', 'id', 'doc'])
        .where('projector', '=', projector.name);
      if (collection !== undefined) query = query.where('collection', '=', collection);
      if (options?.after !== undefined) query = query.where('id', '>', options.after);
      if (options?.prefix !== undefined) {
        // starts_with, not LIKE: ids may hold % and _. The lower bound lets the primary key narrow the scan.
        query = query.where('id', '>=', options.prefix).where(sql<boolean>`starts_with(id, ${options.prefix})`);
      }
      query = query.orderBy('collection').orderBy('id');
      if (options?.limit !== undefined) query = query.limit(options.limit);
      return query.execute();
    });
  return {
    get: async (collection, id) => {
      const row = await read(() =>
        db
          .selectFrom('projection_documents')
          .select('doc')
          .where('projector', '=', projector.name)
          .where('collection', '=', collection)
          .where('id', '=', id)
          .executeTakeFirst(),
      );
      return row ? JSON.parse(row.doc) : undefined;
    },
    list: async (collection, options) => (await rows(collection, options)).map((r) => JSON.parse(r.doc)),
    entries: async (collection, options) =>
      (await rows(collection, options)).map((r) => ({ id: r.id, doc: JSON.parse(r.doc) })),
    dump: async () => {
      const out: Record<string, Record<string, unknown>> = {};
      for (const row of await rows()) {
        out[row.collection] ??= {};
        out[row.collection]![row.id] = JSON.parse(row.doc);
      }
      return out;
    },
    counts: async () => {
      const { rows: counted } = await read(() =>
        sql<{ collection: string; n: number }>`SELECT collection, count(*)::integer AS n FROM projection_documents
          WHERE projector = ${projector.name} GROUP BY collection ORDER BY collection`.execute(db),
      );
      return Object.fromEntries(counted.map((r) => [r.collection, r.n]));
    },
    checkpoint: () =>
      read(async () => {
        const cp = (await runner.readCheckpoints(db)).get(projector.name);
        const head = await deps.head();
        return {
          name: projector.name,
          version: cp?.version ?? projector.version,
          position: await runner.effectivePosition(db, projector, cp?.position ?? 0, head),
        };
      }),
  };
}
