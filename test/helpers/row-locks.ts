import type { SQL } from 'drizzle-orm';
import type { Db } from '../../src/db/client';

/**
 * Runs `statement` in a database transaction of its own and keeps that transaction open, holding the row
 * locks it took (another session's slow statement), until `release` commits it. Answers once they are held.
 */
export async function holdRowLocks(db: Db, statement: SQL): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const holder = db.transaction(async (tx) => {
    await tx.execute(statement);
    locked();
    await released;
  });
  await Promise.race([lockTaken, holder]);
  return {
    async release() {
      release();
      await holder;
    },
  };
}
