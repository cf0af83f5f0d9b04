import { expect } from 'vitest';
import { eq } from 'drizzle-orm';
import { chainLeg } from '../../src/chain/reconciliation';
import { chainNodeById } from '../../src/chain/nodes';
import { readerOf } from '../../src/chain/families';
import { chainTransfers, depositAddresses } from '../../src/db/schema/index';
import type { TestEnv } from './env';

/**
 * What the chain leg (docs/reconciliation.md) finds about one transaction's deposits, reading again the
 * blocks the watcher recorded them from, as `kind reference` lines in order: [] when the chain and the
 * ledger agree.
 */
export async function chainBreaksOf(
  env: TestEnv,
  transactionId: string,
  blocks: { node: string; block: bigint },
) {
  const findings = await chainLeg(env.database.db, env.config.MASTER_KEY).check({
    from: new Date(Date.now() - 60 * 60_000),
    to: new Date(Date.now() + 60_000),
    transactionIds: [transactionId],
    references: [],
    blocks: { [blocks.node]: { from: String(blocks.block), to: String(blocks.block) } },
  });
  return findings
    .filter((f) => f.transactionId === transactionId)
    .map((f) => `${f.kind} ${f.reference}`)
    .sort();
}

/**
 * A deposit the watcher recorded and handed over, checked by the chain leg as the ledger has it, then with
 * the watcher's record of it gone (a missed deposit, counted without being seen) and then recorded for
 * another amount. Answers the three results, for a test to compare.
 */
export async function chainBreaksAfterEdits(env: TestEnv, transactionId: string) {
  const { db } = env.database;
  const recorded = () =>
    db.select().from(chainTransfers).where(eq(chainTransfers.transactionId, transactionId));
  // The watcher marks a deposit handed over once its transaction's update answered, a moment after the
  // transaction may already show SUCCESS.
  await expect.poll(async () => (await recorded())[0]?.handedOverAt ?? null).not.toBeNull();
  const [transfer] = await recorded();
  if (!transfer) throw new Error(`no deposit recorded for ${transactionId}`);
  const where = { node: transfer.chainNodeId, block: transfer.block };
  const clean = await chainBreaksOf(env, transactionId, where);
  const { id, ...kept } = transfer;
  await db.delete(chainTransfers).where(eq(chainTransfers.id, id));
  const missed = await chainBreaksOf(env, transactionId, where);
  await db.insert(chainTransfers).values({ ...kept, amount: '0.5' });
  const otherAmount = await chainBreaksOf(env, transactionId, where);
  await db.delete(chainTransfers).where(eq(chainTransfers.transactionId, transactionId));
  await db.insert(chainTransfers).values(kept);
  const reference = `${transfer.chainNodeId}:${transfer.block}:${transfer.txHash}:${transfer.asset}`;
  // Where the family compares deposit addresses' balances, the address's balance break too.
  const node = await chainNodeById(db, env.config.MASTER_KEY, transfer.chainNodeId);
  const [address] = await db
    .select()
    .from(depositAddresses)
    .where(eq(depositAddresses.transactionId, transactionId));
  const balance =
    node && readerOf(node, db).balancesAt
      ? [`amount balance:${transfer.chainNodeId}:${address!.address}:${transfer.asset}`]
      : [];
  return {
    clean,
    missed,
    otherAmount,
    reference,
    balance,
    deposit: `deposit:${transactionId}:${transfer.txHash}`,
  };
}

/**
 * Checks the chain leg on a transaction paid by one deposit that its watcher counted: nothing to report as
 * it stands, a missed deposit once the watcher's record is gone, and two amounts once it says 0.5.
 */
export async function expectChainReconciled(env: TestEnv, transactionId: string) {
  const { clean, missed, otherAmount, reference, balance, deposit } = await chainBreaksAfterEdits(
    env,
    transactionId,
  );
  expect({ clean, missed, otherAmount }).toEqual({
    clean: [],
    // Without the watcher's record: the chain pays the address (missed), the count has no sighting, and
    // the address holds more than its recorded deposits.
    missed: [...balance, `missing_at_source ${deposit}`, `missing_in_ledger ${reference}`].sort(),
    // Recorded as 0.5: against the chain's amount, against the amount counted, and against the balance.
    otherAmount: [...balance, `amount ${reference}`, `amount ${reference}`].sort(),
  });
}

/**
 * What the chain leg finds about the sends of one transaction's money (its refunds, its on-ramp send), as
 * `kind reference` lines, in a run whose cut-off is `minutesLater` minutes from now: [] when each landed
 * once.
 */
export async function sendBreaksOf(env: TestEnv, transactionId: string, minutesLater = 0) {
  const findings = await chainLeg(env.database.db, env.config.MASTER_KEY).check({
    from: new Date(Date.now() - 60 * 60_000),
    to: new Date(Date.now() + minutesLater * 60_000 + 1_000),
    transactionIds: [transactionId],
    references: [],
  });
  return findings
    .filter((f) => f.reference.startsWith('send:') && f.transactionId === transactionId)
    .map((f) => `${f.kind} ${f.reference}`)
    .sort();
}
