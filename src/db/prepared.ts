import type { Db } from './client';

const statements = new WeakMap<Db, Map<string, unknown>>();
/** Per handle, the statements `preparedWhileFewer` added: what its bound counts, apart from the fixed ones. */
const bounded = new WeakMap<Db, Set<string>>();

/**
 * A prepared statement, built once per database handle and name: drizzle does not rebuild its SQL per
 * request, and each pooled connection has Postgres parse and plan it once (bench/README.md). The name is
 * the statement's on the connection, so one name must always build the same SQL.
 */
export function preparedOnce<T>(db: Db, name: string, build: () => T): T {
  return prepared(db, name, build);
}

/**
 * As `preparedOnce` while the handle holds fewer than `most` statements of this function's (those of
 * `preparedOnce`, a fixed few, do not count); undefined once it holds that many and `name` is not one of
 * them. Statements built from request shapes use it, so that no pattern of requests can fill Postgres's
 * memory with statements: a rare shape is then planned per query.
 */
export function preparedWhileFewer<T>(db: Db, name: string, most: number, build: () => T): T | undefined {
  let mine = bounded.get(db);
  if (!mine) {
    mine = new Set();
    bounded.set(db, mine);
  }
  if (!mine.has(name)) {
    if (mine.size >= most) return undefined;
    mine.add(name);
  }
  return prepared(db, name, build);
}

function prepared<T>(db: Db, name: string, build: () => T): T {
  let mine = statements.get(db);
  if (!mine) {
    mine = new Map();
    statements.set(db, mine);
  }
  let statement = mine.get(name) as T | undefined;
  if (statement === undefined) {
    statement = build();
    mine.set(name, statement);
  }
  return statement;
}
