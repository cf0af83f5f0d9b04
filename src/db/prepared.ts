import type { Db } from './client';

const statements = new WeakMap<Db, Map<string, unknown>>();

/**
 * A prepared statement, built once per database handle and name: drizzle does not rebuild its SQL per
 * request, and each pooled connection has Postgres parse and plan it once (bench/README.md). The name is
 * the statement's on the connection, so one name must always build the same SQL.
 */
export function preparedOnce<T>(db: Db, name: string, build: () => T): T {
  return preparedWhileFewer(db, name, Infinity, build) as T;
}

/**
 * As `preparedOnce` while the handle holds fewer than `most` statements; undefined once it holds that many
 * and `name` is not one of them. Statements built from request shapes use it, so that no pattern of
 * requests can fill Postgres's memory with statements: a rare shape is then planned per query.
 */
export function preparedWhileFewer<T>(db: Db, name: string, most: number, build: () => T): T | undefined {
  let mine = statements.get(db);
  if (!mine) {
    mine = new Map();
    statements.set(db, mine);
  }
  let statement = mine.get(name) as T | undefined;
  if (statement === undefined) {
    if (mine.size >= most) return undefined;
    statement = build();
    mine.set(name, statement);
  }
  return statement;
}
