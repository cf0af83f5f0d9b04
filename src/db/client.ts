import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { fromRoot } from '../platform/root';
import * as schema from './schema/index';

export type Db = NodePgDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

// int8 columns come back as strings by default; money in minor units is read as bigint instead.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => BigInt(value));

export interface Database {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function createDatabase(url: string, poolSize = 10): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });
  // A client in use when Postgres ends its connection (a restart, a failover) emits 'error' too, where the
  // idle handler above no longer hears it: unheard, Node ends the process. The query it was running rejects
  // with the same error and the pool drops the client when it is released, so nothing is lost here.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const db = drizzle(pool, { schema, casing: 'snake_case' });
  return { db, pool, close: () => pool.end() };
}

export const migrationsFolder = fromRoot('migrations');

const MIGRATION_LOCK = 727_001;

/** Applies pending migrations; several processes starting at once wait on an advisory lock, one migrates. */
export async function runMigrations(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client, { schema, casing: 'snake_case' }), { migrationsFolder });
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
