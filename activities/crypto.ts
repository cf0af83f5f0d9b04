import { eq } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { cryptoDeposits, merchants } from '../src/db/schema/index';
import type { ChainConnector, FiatPayouts } from './connectors/sandbox-chain';

export interface CryptoSettings {
  /** Crypto units within which a deposit counts as exact. */
  tolerance: string;
  overpaidPolicy: 'keep' | 'refund';
  underpaidPolicy: 'fail' | 'accept';
}

/** Deposits, sends and settlement bookkeeping for ramps and payins; each keyed by the transaction. */
export function cryptoActivities(db: Db, chain: ChainConnector & FiatPayouts) {
  return {
    async cryptoSettings(input: { merchantId: string }): Promise<CryptoSettings> {
      const [merchant] = await db.select().from(merchants).where(eq(merchants.id, input.merchantId));
      if (!merchant) throw new Error(`merchant ${input.merchantId} not found`);
      return {
        tolerance: merchant.cryptoTolerance,
        overpaidPolicy: merchant.overpaidPolicy === 'refund' ? 'refund' : 'keep',
        underpaidPolicy: merchant.underpaidPolicy === 'accept' ? 'accept' : 'fail',
      };
    },

    async openDepositAddress(input: { transactionId: string; network: string }): Promise<string> {
      return chain.depositAddress(input.transactionId, input.network);
    },

    /** True the first time a transaction hash is seen for the transaction. */
    async recordDeposit(input: { transactionId: string; txHash: string; amount: string }): Promise<boolean> {
      const inserted = await db
        .insert(cryptoDeposits)
        .values({ transactionId: input.transactionId, txHash: input.txHash, amount: input.amount })
        .onConflictDoNothing({ target: [cryptoDeposits.transactionId, cryptoDeposits.txHash] })
        .returning({ id: cryptoDeposits.id });
      return inserted.length > 0;
    },

    async sendCrypto(input: {
      transactionId: string;
      network: string;
      address: string;
      amount: string;
      currency: string;
    }) {
      return chain.send({ idempotencyKey: `send:${input.transactionId}`, ...input });
    },

    /** Returns crypto to the customer (an under- or overpayment); keyed so a retry refunds once. */
    async refundCrypto(input: { transactionId: string; network: string; amount: string; currency: string }) {
      return chain.send({ idempotencyKey: `refund:${input.transactionId}`, address: 'sender', ...input });
    },

    async payoutFiat(input: { transactionId: string; currency: string; amount: string }): Promise<string> {
      return chain.payout({
        idempotencyKey: `offramp:${input.transactionId}`,
        currency: input.currency,
        amount: input.amount,
      });
    },
  };
}
