import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestDatabase } from '../helpers/env';
import { createDatabase, type Database } from '../../src/db/client';
import { cardVault } from '../../src/db/schema/index';
import { sweepCardVault } from '../../src/transactions/card-vault';

let database: Database;
let drop: () => Promise<void>;

beforeAll(async () => {
  const testDb = await createTestDatabase();
  drop = testDb.drop;
  database = createDatabase(testDb.url, 2);
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

describe('card vault sweep', () => {
  it('drops CVVs past their hold and cards past theirs, and nothing else', async () => {
    const past = new Date(Date.now() - 1000);
    const future = new Date(Date.now() + 600_000);
    await database.db.insert(cardVault).values([
      {
        transactionId: 'PAcvvExpired',
        panEnc: 'x',
        expiryEnc: 'x',
        cvvEnc: 'c',
        cvvExpiresAt: past,
        expiresAt: future,
      },
      {
        transactionId: 'PAallExpired',
        panEnc: 'x',
        expiryEnc: 'x',
        cvvEnc: 'c',
        cvvExpiresAt: past,
        expiresAt: past,
      },
      {
        transactionId: 'PAfresh',
        panEnc: 'x',
        expiryEnc: 'x',
        cvvEnc: 'c',
        cvvExpiresAt: future,
        expiresAt: future,
      },
    ]);
    expect(await sweepCardVault(database.db)).toEqual({ cvvs: 2, cards: 1 });
    const rows = await database.db.select().from(cardVault);
    expect(rows.map((r) => [r.transactionId, r.cvvEnc]).sort()).toEqual([
      ['PAcvvExpired', null],
      ['PAfresh', 'c'],
    ]);
    expect(await sweepCardVault(database.db)).toEqual({ cvvs: 0, cards: 0 });
    await database.db.delete(cardVault).where(eq(cardVault.transactionId, 'PAfresh'));
  });
});
