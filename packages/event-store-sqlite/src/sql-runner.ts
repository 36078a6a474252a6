import type Database from 'better-sqlite3';
import type { Compilable } from 'kysely';

/**
 * Runs Kysely-built queries synchronously on one better-sqlite3 connection, caching one prepared
 * statement per distinct SQL text.
 */
export class SqlRunner {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly db: Database.Database) {}

  statement(text: string): Database.Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  all<R>(query: Compilable<R>): R[] {
    const { sql, parameters } = query.compile();
    return this.statement(sql).all(...(parameters as unknown[])) as R[];
  }

  get<R>(query: Compilable<R>): R | undefined {
    const { sql, parameters } = query.compile();
    return this.statement(sql).get(...(parameters as unknown[])) as R | undefined;
  }

  run(query: Compilable<unknown>): Database.RunResult {
    const { sql, parameters } = query.compile();
    return this.statement(sql).run(...(parameters as unknown[]));
  }
}
