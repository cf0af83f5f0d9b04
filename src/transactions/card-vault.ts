import { and, eq, isNull, lt, sql, type SQL, type WithSubquery } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { Db, Tx } from '../db/client';
import { cardVault, transactions } from '../db/schema/index';
import { decryptSecret, encryptSecret, keyedDigest } from '../ciphers/secrets';
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

/**
 * The card vault: the one owner of card numbers, expiries and CVVs, held encrypted for a transaction's
 * workflow until it has used them (docs/architecture.md). Nothing else reads or writes its table.
 */

/** Card data a transaction's workflow will need, held encrypted until it has used it. */
export interface CardToVault {
  pan: string;
  expiryMonth: string;
  expiryYear: string;
  cvv?: string;
  /** How long the number may wait in the vault. */
  holdSeconds: number;
}

/** The vault's row for `card`: its number, expiry and CVV encrypted, and when each must be gone. */
function vaultRow(masterKey: string, card: CardToVault) {
  const now = Date.now();
  return {
    panEnc: encryptSecret(card.pan, masterKey),
    expiryEnc: encryptSecret(`${card.expiryMonth}/${card.expiryYear}`, masterKey),
    cvvEnc: card.cvv ? encryptSecret(card.cvv, masterKey) : null,
    cvvExpiresAt: card.cvv ? new Date(now + CVV_HOLD_SECONDS * 1000) : null,
    expiresAt: new Date(now + card.holdSeconds * 1000),
  };
}

/** Holds the card encrypted until the transaction's workflow has used it. */
export async function vaultCard(tx: Tx, masterKey: string, transactionId: string, card: CardToVault) {
  await tx
    .insert(cardVault)
    .values({ transactionId, ...vaultRow(masterKey, card) })
    .onConflictDoNothing();
}

/**
 * As `vaultCard`, as a part of the statement that claims the transaction: a common table expression that
 * holds the card for the row `claimed` answers (a CTE of the transaction's insert, answering its `id`), and
 * for none when the claim inserted none. The card and the claim commit together, in one round trip.
 */
export function vaultCardFor(claimed: WithSubquery, masterKey: string, card: CardToVault): WithSubquery {
  const row = vaultRow(masterKey, card);
  const at = (date: Date | null) => (date ? date.toISOString() : null);
  return new QueryBuilder().$with('vaulted', { transactionId: cardVault.transactionId }).as(sql`
    insert into ${cardVault} (transaction_id, pan_enc, expiry_enc, cvv_enc, cvv_expires_at, expires_at)
    select id, ${row.panEnc}, ${row.expiryEnc}, ${row.cvvEnc}::text, ${at(row.cvvExpiresAt)}::timestamptz,
      ${at(row.expiresAt)}::timestamptz
    from ${claimed}
    on conflict do nothing
    returning ${cardVault.transactionId}`);
}

/** Whether this card (by fingerprint) already paid this merchant successfully in this mode, in SQL. */
export function cardPaidBefore(merchant: MerchantScope, fingerprint: string): SQL<boolean> {
  const paid = new QueryBuilder()
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
  return sql<boolean>`exists (${paid})`;
}

/** Whether this card (by fingerprint) already paid this merchant successfully in this mode. */
export async function cardSucceededBefore(db: Db, merchant: MerchantScope, fingerprint: string) {
  const { rows } = await db.execute<{ paid: boolean }>(
    sql`select ${cardPaidBefore(merchant, fingerprint)} as paid`,
  );
  return rows[0]?.paid === true;
}

/** The update that purges a transaction's card (`purgeVaultedCard`), with `q`. */
function purge(q: Db | Tx, transactionId: string) {
  return q
    .update(cardVault)
    .set({ panEnc: null, expiryEnc: null, cvvEnc: null, cvvExpiresAt: null, purgedAt: sql`now()` })
    .where(eq(cardVault.transactionId, transactionId));
}

/**
 * Removes the card number and CVV once no step needs them. The row stays as a tombstone, so a replayed
 * create cannot vault the card again; the maintenance sweep removes it when its hold ends.
 */
export async function purgeVaultedCard(db: Db | Tx, transactionId: string): Promise<void> {
  await purge(db, transactionId);
}

/**
 * As `purgeVaultedCard`, as a part of another statement (a common table expression): Postgres runs it
 * whatever the statement's main query does, so the purge costs no round trip of its own.
 */
export function purgeVaultedCardWith(db: Db | Tx, transactionId: string): WithSubquery {
  return db
    .$with('purged')
    .as(purge(db, transactionId).returning({ transactionId: cardVault.transactionId }));
}

/** A vaulted card as far as its holds allow: the CVV only within its short hold; nothing once purged. */
export interface VaultedCard {
  pan?: string;
  /** `MM/YYYY`. */
  expiry?: string;
  cvv?: string;
}

/** The transaction's vaulted card, decrypted for the call that uses it; undefined when none was vaulted. */
export async function readVaultedCard(
  db: Db,
  masterKey: string,
  transactionId: string,
): Promise<VaultedCard | undefined> {
  const [row] = await db
    .select({
      pan: cardVault.panEnc,
      expiry: cardVault.expiryEnc,
      cvv: sql<string | null>`case when ${cardVault.cvvExpiresAt} > now() then ${cardVault.cvvEnc} end`,
    })
    .from(cardVault)
    .where(eq(cardVault.transactionId, transactionId));
  return row ? openCard(row, masterKey) : undefined;
}

/** A vault row's encrypted card, decrypted; what is gone stays absent. */
function openCard(row: { pan: string | null; expiry: string | null; cvv: string | null }, masterKey: string) {
  const open = (value: string | null) => (value ? decryptSecret(value, masterKey) : undefined);
  return { pan: open(row.pan), expiry: open(row.expiry), cvv: open(row.cvv) };
}

/** The idempotency keys sent with the transaction's card, in the order sent (nothing decrypted). */
export async function keysSentWith(db: Db, transactionId: string): Promise<string[]> {
  const [row] = await db
    .select({ sent: cardVault.authorizationsSent })
    .from(cardVault)
    .where(eq(cardVault.transactionId, transactionId));
  return row?.sent ?? [];
}

/**
 * Whether a key was noted as sent with the card (`noteCardSend`), and if not, why: other keys that may have
 * been processed (`elsewhere`), or, with none, the transaction's sends were closed (`closeCardSends`); or no
 * vault row at all.
 */
export type CardSendNote =
  | { noted: true; card: VaultedCard; before: boolean }
  | { noted: false; elsewhere: string[] }
  | { noted: false; missing: true };

/**
 * Notes a key (a card payment's authorization key, a payout's key) as sent with the card, before anything
 * of the send happens (a payout's reserve included), in one statement: only while the sends are open
 * (`closeCardSends`) and no other key was sent that the caller does not know was `notProcessed`. A
 * workflow task that was lost may have sent through a terminal its retry does not list: the retry is told
 * of it (`elsewhere`) and asks first. Noted, it answers the card the send needs (the number and expiry,
 * none once purged; the CVV within its hold), and whether the key was noted before (by another attempt, or
 * an earlier send of this one).
 */
export async function noteCardSend(
  db: Db,
  masterKey: string,
  transactionId: string,
  key: string,
  notProcessed: string[],
): Promise<CardSendNote> {
  // The row is locked first, so `before` is read from the version the update replaces.
  const { rows } = await db.execute<{
    pan: string | null;
    expiry: string | null;
    cvv: string | null;
    before: boolean;
  }>(sql`
    with prior as (
      select ${cardVault.authorizationsSent} as sent from ${cardVault}
      where ${cardVault.transactionId} = ${transactionId} for update
    )
    update ${cardVault} set authorizations_sent = case when ${key} = any(prior.sent)
      then prior.sent else array_append(prior.sent, ${key}) end
    from prior
    where ${cardVault.transactionId} = ${transactionId} and ${cardVault.sendsClosedAt} is null
      and prior.sent <@ ${sql.param([...notProcessed, key])}::text[]
    returning ${cardVault.panEnc} as pan, ${cardVault.expiryEnc} as expiry,
      case when ${cardVault.cvvExpiresAt} > now() then ${cardVault.cvvEnc} end as cvv,
      ${key} = any(prior.sent) as before`);
  const [noted] = rows;
  if (noted) return { noted: true, card: openCard(noted, masterKey), before: noted.before };
  const [row] = await db
    .select({ sent: cardVault.authorizationsSent })
    .from(cardVault)
    .where(eq(cardVault.transactionId, transactionId));
  if (!row) return { noted: false, missing: true };
  // Keys are only ever added, so the ones that refused the note are still there.
  return {
    noted: false,
    elsewhere: row.sent.filter((sent) => sent !== key && !notProcessed.includes(sent)),
  };
}

/**
 * Whether a transaction's sends with its card are still open, in SQL: its vault row is there and was not
 * closed. The row is locked against the close until the statement's transaction ends, so a money step
 * guarded by it (a payout's reserve) either commits before the close, and the ending that closed finds
 * it, or runs after it and does nothing.
 */
export function sendsOpen(transactionId: string): SQL<boolean> {
  const open = new QueryBuilder()
    .select({ one: sql`1` })
    .from(cardVault)
    .where(and(eq(cardVault.transactionId, transactionId), isNull(cardVault.sendsClosedAt)))
    .for('share');
  return sql<boolean>`exists (${open})`;
}

/**
 * Closes a transaction's sends with its card (a card payment or a payout ends without a send of its own)
 * and answers the keys noted before: no key is noted after this, and so nothing reserved or sent by an
 * attempt that had not noted; what was noted is asked about before the transaction ends.
 */
export async function closeCardSends(db: Db, transactionId: string): Promise<string[]> {
  const [row] = await db
    .update(cardVault)
    .set({ sendsClosedAt: sql`coalesce(${cardVault.sendsClosedAt}, now())` })
    .where(eq(cardVault.transactionId, transactionId))
    .returning({ sent: cardVault.authorizationsSent });
  return row?.sent ?? [];
}

/**
 * Removes card data whose hold has expired: CVVs past their short hold, and vault rows (tombstones
 * included) past theirs. The deletes are idempotent, so several processes at once do no harm.
 */
export async function sweepCardVault(db: Db): Promise<{ cvvs: number; cards: number }> {
  const cvvs = await db
    .update(cardVault)
    .set({ cvvEnc: null, cvvExpiresAt: null })
    .where(lt(cardVault.cvvExpiresAt, sql`now()`))
    .returning({ id: cardVault.transactionId });
  const cards = await db
    .delete(cardVault)
    .where(lt(cardVault.expiresAt, sql`now()`))
    .returning({ id: cardVault.transactionId });
  return { cvvs: cvvs.length, cards: cards.length };
}
