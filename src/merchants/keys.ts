import { and, eq, gt, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { auditLog, encryptionKeys, merchants, secretKeys, webhookSecrets } from '../db/schema/index';
import { decryptSecret, encryptSecret } from '../ciphers/secrets';
import { hashSecretKey, newEncryptionKey, newSecretKey } from '../ciphers/keys';
import { MODES, type Mode } from '../lib/vocabulary';

export interface AuthenticatedMerchant {
  merchantId: string;
  mode: Mode;
}

/** Finds the merchant whose unexpired secret key this is, for the key's own mode. */
export async function findMerchantBySecretKey(
  db: Db,
  secretKey: string,
): Promise<AuthenticatedMerchant | undefined> {
  const rows = await db
    .select({ merchantId: secretKeys.merchantId, mode: secretKeys.mode })
    .from(secretKeys)
    .where(
      and(
        eq(secretKeys.keyHash, hashSecretKey(secretKey)),
        or(isNull(secretKeys.expiresAt), gt(secretKeys.expiresAt, sql`now()`)),
      ),
    )
    .limit(1);
  return rows[0];
}

/** Every envelope key currently valid for the merchant, newest first. */
export async function merchantEncryptionKeys(
  db: Db,
  masterKey: string,
  merchantId: string,
): Promise<string[]> {
  const rows = await db
    .select({ keyEnc: encryptionKeys.keyEnc })
    .from(encryptionKeys)
    .where(and(eq(encryptionKeys.merchantId, merchantId), validNow(encryptionKeys.expiresAt)))
    .orderBy(sql`${encryptionKeys.createdAt} desc, ${encryptionKeys.id} desc`);
  return rows.map((row) => decryptSecret(row.keyEnc, masterKey));
}

/**
 * The merchant's valid webhook secrets, newest first: one, or during a rotation's overlap the new one and
 * those it replaces (docs/webhooks.md).
 */
export async function merchantWebhookSecrets(
  db: Db,
  masterKey: string,
  merchantId: string,
): Promise<string[]> {
  const rows = await db
    .select({ secretEnc: webhookSecrets.secretEnc })
    .from(webhookSecrets)
    .where(and(eq(webhookSecrets.merchantId, merchantId), validNow(webhookSecrets.expiresAt)))
    .orderBy(sql`${webhookSecrets.createdAt} desc, ${webhookSecrets.id} desc`);
  return rows.map((row) => decryptSecret(row.secretEnc, masterKey));
}

/** A key, secret or webhook secret not retired, or retired only at a time still to come. */
function validNow(expiresAt: typeof webhookSecrets.expiresAt | typeof encryptionKeys.expiresAt) {
  return or(isNull(expiresAt), gt(expiresAt, sql`now()`));
}

type Expiring =
  typeof secretKeys.expiresAt | typeof encryptionKeys.expiresAt | typeof webhookSecrets.expiresAt;

/**
 * One rotation of a merchant's credentials, in one database transaction: the merchant must exist; `rotate`
 * retires what it replaces at the end of the overlap (`retiring` picks what is valid past it) and adds the
 * new; the rotation is audited as `action`. Answers what `rotate` made and when the old ones stop.
 */
async function rotation<T>(
  db: Db,
  merchantId: string,
  overlapHours: number,
  action: string,
  rotate: (tx: Tx, expiry: SQL, retiring: (column: Expiring) => SQL | undefined) => Promise<T>,
): Promise<{ made: T; expiresAt: string }> {
  return db.transaction(async (tx) => {
    const [merchant] = await tx
      .select({ id: merchants.id })
      .from(merchants)
      .where(eq(merchants.id, merchantId));
    if (!merchant) throw new Error(`Merchant ${merchantId} not found.`);
    const expiry = sql`now() + make_interval(hours => ${overlapHours})`;
    const made = await rotate(tx, expiry, (column) => or(isNull(column), gt(column, expiry)));
    const [{ at }] = (await tx.execute<{ at: string }>(sql`select (${expiry})::text as at`)).rows as [
      { at: string },
    ];
    await tx.insert(auditLog).values({ merchantId, action, details: { overlapHours } });
    return { made, expiresAt: new Date(at).toISOString() };
  });
}

/**
 * Issues new secret keys (both modes), a new encryption key and with it a new webhook secret. The old ones
 * keep working for `overlapHours`, then stop.
 */
export async function rotateMerchantKeys(
  db: Db,
  masterKey: string,
  merchantId: string,
  overlapHours: number,
): Promise<{
  test_secret_key: string;
  live_secret_key: string;
  encryption_key: string;
  /** What signs webhooks from now on: the new encryption key (docs/webhooks.md). */
  webhook_secret: string;
  old_keys_expire_at: string;
}> {
  const keys = { test: newSecretKey('test'), live: newSecretKey('live') };
  const encryptionKey = newEncryptionKey();
  const { made: ownWebhookSecret, expiresAt } = await rotation(
    db,
    merchantId,
    overlapHours,
    'merchant.keys_rotated',
    async (tx, expiry, retiring) => {
      // The webhook secret follows the encryption key unless the merchant was given one of its own
      // (`rotateWebhookSecret`), which this rotation leaves as it is.
      const [signing] = await tx
        .select({ secretEnc: webhookSecrets.secretEnc })
        .from(webhookSecrets)
        .where(and(eq(webhookSecrets.merchantId, merchantId), validNow(webhookSecrets.expiresAt)))
        .orderBy(sql`${webhookSecrets.createdAt} desc, ${webhookSecrets.id} desc`)
        .limit(1);
      const [encrypting] = await tx
        .select({ keyEnc: encryptionKeys.keyEnc })
        .from(encryptionKeys)
        .where(and(eq(encryptionKeys.merchantId, merchantId), validNow(encryptionKeys.expiresAt)))
        .orderBy(sql`${encryptionKeys.createdAt} desc, ${encryptionKeys.id} desc`)
        .limit(1);
      const own =
        signing &&
        encrypting &&
        decryptSecret(signing.secretEnc, masterKey) !== decryptSecret(encrypting.keyEnc, masterKey)
          ? decryptSecret(signing.secretEnc, masterKey)
          : undefined;
      await tx
        .update(secretKeys)
        .set({ expiresAt: expiry })
        .where(and(eq(secretKeys.merchantId, merchantId), retiring(secretKeys.expiresAt)));
      await tx
        .update(encryptionKeys)
        .set({ expiresAt: expiry })
        .where(and(eq(encryptionKeys.merchantId, merchantId), retiring(encryptionKeys.expiresAt)));
      await addApiKeys(tx, masterKey, merchantId, keys, encryptionKey);
      // What signs webhooks rotates with what encrypts requests, over the same overlap (the webhook secret
      // is the encryption key, as the contract's default has it), unless it is a secret of its own.
      if (own === undefined)
        await replaceWebhookSecret(tx, masterKey, merchantId, encryptionKey, expiry, retiring);
      return own;
    },
  );
  return {
    test_secret_key: keys.test,
    live_secret_key: keys.live,
    encryption_key: encryptionKey,
    webhook_secret: ownWebhookSecret ?? encryptionKey,
    old_keys_expire_at: expiresAt,
  };
}

/** Retires the merchant's webhook secrets at `expiry` and adds `secret`, which signs from now on. */
async function replaceWebhookSecret(
  tx: Tx,
  masterKey: string,
  merchantId: string,
  secret: string,
  expiry: SQL,
  retiring: (column: Expiring) => SQL | undefined,
): Promise<void> {
  await tx
    .update(webhookSecrets)
    .set({ expiresAt: expiry })
    .where(and(eq(webhookSecrets.merchantId, merchantId), retiring(webhookSecrets.expiresAt)));
  await tx.insert(webhookSecrets).values({ merchantId, secretEnc: encryptSecret(secret, masterKey) });
}

/**
 * Gives the merchant a webhook secret of its own, apart from its encryption key (docs/webhooks.md): whoever
 * verifies webhooks then cannot make encrypted requests, and a leaked secret is replaced without new API
 * keys. The secrets signing now keep signing beside it for `overlapHours` (every delivery carries a
 * signature by each), then stop; later key rotations leave it as it is. Audited.
 */
export async function rotateWebhookSecret(
  db: Db,
  masterKey: string,
  merchantId: string,
  overlapHours: number,
): Promise<{ webhook_secret: string; old_secrets_expire_at: string }> {
  const secret = newEncryptionKey();
  const { expiresAt } = await rotation(
    db,
    merchantId,
    overlapHours,
    'merchant.webhook_secret_rotated',
    (tx, expiry, retiring) => replaceWebhookSecret(tx, masterKey, merchantId, secret, expiry, retiring),
  );
  return { webhook_secret: secret, old_secrets_expire_at: expiresAt };
}

/** Stores a merchant's new secret keys (hashed, with their shown prefix) and encryption key (encrypted). */
export async function addApiKeys(
  tx: Tx,
  masterKey: string,
  merchantId: string,
  keys: Record<Mode, string>,
  encryptionKey: string,
): Promise<void> {
  for (const mode of MODES) {
    await tx.insert(secretKeys).values({
      merchantId,
      mode,
      keyHash: hashSecretKey(keys[mode]),
      keyPrefix: keys[mode].slice(0, 12),
    });
  }
  await tx.insert(encryptionKeys).values({ merchantId, keyEnc: encryptSecret(encryptionKey, masterKey) });
}
