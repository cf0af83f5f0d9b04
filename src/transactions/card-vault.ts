import { and, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { cardVault, transactions } from '../db/schema/index';
import { encryptSecret, keyedDigest } from '../ciphers/secrets';
import type { CardSummary } from '../contracts';
import type { MerchantScope } from './deps';

/** What may be kept of a card number: BIN, last four and a keyed fingerprint. */
export function summarizeCard(pan: string, masterKey: string): CardSummary {
  return {
    bin: pan.slice(0, 6),
    last4: pan.slice(-4),
    fingerprint: keyedDigest(pan, masterKey, 'card-fingerprint'),
  };
}

/** How long a CVV may wait for authorization before it is gone for good. */
export const CVV_HOLD_SECONDS = 10 * 60;

/** Card data a transaction's workflow will need, held encrypted until it has used it. */
export interface CardToVault {
  pan: string;
  expiryMonth: string;
  expiryYear: string;
  cvv?: string;
  /** How long the number may wait in the vault. */
  holdSeconds: number;
}

/** Holds the card encrypted until the transaction's workflow has used it. */
export async function vaultCard(tx: Tx, masterKey: string, transactionId: string, card: CardToVault) {
  const now = Date.now();
  await tx
    .insert(cardVault)
    .values({
      transactionId,
      panEnc: encryptSecret(card.pan, masterKey),
      expiryEnc: encryptSecret(`${card.expiryMonth}/${card.expiryYear}`, masterKey),
      cvvEnc: card.cvv ? encryptSecret(card.cvv, masterKey) : null,
      cvvExpiresAt: card.cvv ? new Date(now + CVV_HOLD_SECONDS * 1000) : null,
      expiresAt: new Date(now + card.holdSeconds * 1000),
    })
    .onConflictDoNothing();
}

/** Whether this card (by fingerprint) already paid this merchant successfully in this mode. */
export async function cardSucceededBefore(db: Db, merchant: MerchantScope, fingerprint: string) {
  const rows = await db
    .select({ one: sql`1` })
    .from(transactions)
    .where(
      and(
        eq(transactions.merchantId, merchant.merchantId),
        eq(transactions.mode, merchant.mode),
        eq(transactions.cardFingerprint, fingerprint),
        eq(transactions.kind, 'card'),
        eq(transactions.status, 'SUCCESS'),
      ),
    )
    .limit(1);
  return rows.length > 0;
}

/**
 * Removes the card number and CVV once no step needs them. The row stays as a tombstone, so a replayed
 * create cannot vault the card again; the maintenance sweep removes it when its hold ends.
 */
export async function purgeVaultedCard(db: Db, transactionId: string): Promise<void> {
  await db
    .update(cardVault)
    .set({ panEnc: null, expiryEnc: null, cvvEnc: null, cvvExpiresAt: null, purgedAt: sql`now()` })
    .where(eq(cardVault.transactionId, transactionId));
}
