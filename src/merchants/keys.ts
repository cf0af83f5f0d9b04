import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { auditLog, encryptionKeys, merchants, secretKeys } from '../db/schema/index';
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
    .where(
      and(
        eq(encryptionKeys.merchantId, merchantId),
        or(isNull(encryptionKeys.expiresAt), gt(encryptionKeys.expiresAt, sql`now()`)),
      ),
    )
    .orderBy(sql`${encryptionKeys.createdAt} desc, ${encryptionKeys.id} desc`);
  return rows.map((row) => decryptSecret(row.keyEnc, masterKey));
}

export async function merchantWebhookSecret(db: Db, masterKey: string, merchantId: string): Promise<string> {
  const [row] = await db
    .select({ secret: merchants.webhookSecretEnc })
    .from(merchants)
    .where(eq(merchants.id, merchantId));
  if (!row) throw new Error(`merchant ${merchantId} not found`);
  return decryptSecret(row.secret, masterKey);
}

/**
 * Issues new secret keys (both modes) and a new encryption key. The old ones keep working for
 * `overlapHours`, then stop.
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
  old_keys_expire_at: string;
}> {
  const keys = { test: newSecretKey('test'), live: newSecretKey('live') };
  const encryptionKey = newEncryptionKey();
  return db.transaction(async (tx) => {
    const [merchant] = await tx
      .select({ id: merchants.id })
      .from(merchants)
      .where(eq(merchants.id, merchantId));
    if (!merchant) throw new Error(`Merchant ${merchantId} not found.`);
    const expiry = sql`now() + make_interval(hours => ${overlapHours})`;
    const retiring = (column: typeof secretKeys.expiresAt | typeof encryptionKeys.expiresAt) =>
      or(isNull(column), gt(column, expiry));
    await tx
      .update(secretKeys)
      .set({ expiresAt: expiry })
      .where(and(eq(secretKeys.merchantId, merchantId), retiring(secretKeys.expiresAt)));
    await tx
      .update(encryptionKeys)
      .set({ expiresAt: expiry })
      .where(and(eq(encryptionKeys.merchantId, merchantId), retiring(encryptionKeys.expiresAt)));
    for (const mode of MODES) {
      await tx
        .insert(secretKeys)
        .values({ merchantId, mode, keyHash: hashSecretKey(keys[mode]), keyPrefix: keys[mode].slice(0, 12) });
    }
    await tx.insert(encryptionKeys).values({ merchantId, keyEnc: encryptSecret(encryptionKey, masterKey) });
    const [{ at }] = (await tx.execute<{ at: string }>(sql`select (${expiry})::text as at`)).rows as [
      { at: string },
    ];
    await tx
      .insert(auditLog)
      .values({ merchantId, action: 'merchant.keys_rotated', details: { overlapHours } });
    return {
      test_secret_key: keys.test,
      live_secret_key: keys.live,
      encryption_key: encryptionKey,
      old_keys_expire_at: new Date(at).toISOString(),
    };
  });
}
