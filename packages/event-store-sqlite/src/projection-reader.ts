import type { ProjectionReader, Projector } from '@demiurge/event-store';
import type { ProjectorRunner } from './projector-runner.js';
import type { SqlRunner } from './sql-runner.js';
import { listDocuments } from './sqlite-projection-tx.js';

const GET_DOCUMENT = 'SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? AND id = ?';

/** Read access to one projector's documents outside the append transaction. */
export function createProjectionReader(
  projector: Projector,
  deps: {
    runner: SqlRunner;
    projections: ProjectorRunner;
    /** Runs a read, refusing a closed or damaged store and stopping it on a corruption error. */
    guard: <T>(read: () => T) => T;
  },
): ProjectionReader {
  const { runner, projections, guard } = deps;
  const rows = (collection?: string, options?: Parameters<ProjectionReader['list']>[1]) =>
    guard(() => listDocuments(runner, projector.name, collection, options));
  return {
    // Fixed SQL text, its prepared statement reused: a claim reads its item through this (no query compiling).
    get: async (collection, id) => {
      const row = guard(() => runner.statement(GET_DOCUMENT).get(projector.name, collection, id)) as
        | { doc: string }
        | undefined;
      return row ? JSON.parse(row.doc) : undefined;
    },
    list: async (collection, options) => rows(collection, options).map((r) => JSON.parse(r.doc)),
    entries: async (collection, options) =>
      rows(collection, options).map((r) => ({ id: r.id, doc: JSON.parse(r.doc) })),
    dump: async () => {
      const out: Record<string, Record<string, unknown>> = {};
      for (const row of rows()) {
        out[row.collection] ??= {};
        out[row.collection]![row.id] = JSON.parse(row.doc);
      }
      return out;
    },
    counts: async () =>
      Object.fromEntries(
        guard(() =>
          runner
            .statement(
              'SELECT collection, COUNT(*) AS n FROM projection_documents WHERE projector = ? GROUP BY collection ORDER BY collection',
            )
            .all(projector.name),
        ).map((r) => {
          const row = r as { collection: string; n: number };
          return [row.collection, row.n];
        }),
      ),
    checkpoint: async () =>
      guard(() => {
        const cp = projections.readCheckpoints().get(projector.name);
        return {
          name: projector.name,
          version: cp?.version ?? projector.version,
          position: projections.effectivePosition(projector, cp?.position ?? 0),
        };
      }),
  };
}
