import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { auditLog, encryptionKeys, merchants, secretKeys, terminals, wallets } from '../db/schema/index';
import { decryptSecret, encryptSecret } from '../ciphers/secrets';
import { hashSecretKey, newEncryptionKey, newSecretKey } from '../ciphers/keys';
import { newId } from '../ciphers/ids';
import { MODES, type Mode } from '../lib/vocabulary';
import { creditWallet } from '../wallets/ledger';

export interface WalletSpec {
  currency: string;
  amount: bigint;
}

/** The credentials a merchant needs, in the shape of `.data/sandbox-merchant.json`. */
export interface MerchantCredentials {
  merchant_id: string;
  test_secret_key: string;
  live_secret_key: string;
  encryption_key: string;
  webhook_secret: string;
  wallets: { wallet_id: string; mode: Mode; currency: string; amount: string }[];
  terminals: {
    terminal_id: string;
    mode: Mode;
    kinds: string[];
    priority: number;
    descriptor: string | null;
  }[];
}

export interface TerminalSpec {
  connector: string;
  kinds: string[];
  priority: number;
  descriptor: string | null;
}

/** Sandbox terminals for every kind; two for cards so a technical failure visibly cascades. */
export const SANDBOX_TERMINALS: TerminalSpec[] = [
  { connector: 'sandbox-acquirer', kinds: ['card'], priority: 10, descriptor: 'SANDBOX*PRIMARY' },
  { connector: 'sandbox-acquirer', kinds: ['card'], priority: 20, descriptor: 'SANDBOX*FALLBACK' },
  { connector: 'sandbox-payouts', kinds: ['payout'], priority: 10, descriptor: 'SANDBOX*PAYOUT' },
  {
    connector: 'sandbox-crypto',
    kinds: ['ramp', 'crypto_payin'],
    priority: 10,
    descriptor: 'SANDBOX*CRYPTO',
  },
];

export async function createMerchant(
  db: Db,
  masterKey: string,
  options: { name: string; wallets: WalletSpec[]; terminals: TerminalSpec[] },
): Promise<MerchantCredentials> {
  const merchantId = newId('mer');
  const keys = { test: newSecretKey('test'), live: newSecretKey('live') };
  const encryptionKey = newEncryptionKey();
  const webhookSecret = encryptionKey;
  return db.transaction(async (tx) => {
    await tx.insert(merchants).values({
      id: merchantId,
      name: options.name,
      webhookSecretEnc: encryptSecret(webhookSecret, masterKey),
    });
    for (const mode of MODES) {
      await tx.insert(secretKeys).values({
        merchantId,
        mode,
        keyHash: hashSecretKey(keys[mode]),
        keyPrefix: keys[mode].slice(0, 12),
      });
    }
    await tx.insert(encryptionKeys).values({ merchantId, keyEnc: encryptSecret(encryptionKey, masterKey) });
    const createdWallets: MerchantCredentials['wallets'] = [];
    const createdTerminals: MerchantCredentials['terminals'] = [];
    for (const mode of MODES) {
      for (const spec of options.wallets) {
        const walletId = newId('wal');
        await tx.insert(wallets).values({ id: walletId, merchantId, mode, currency: spec.currency });
        if (spec.amount > 0n) await creditWallet(tx, walletId, `opening_${walletId}`, spec.amount);
        createdWallets.push({
          wallet_id: walletId,
          mode,
          currency: spec.currency,
          amount: spec.amount.toString(),
        });
      }
      for (const spec of options.terminals) {
        const terminalId = newId('ter');
        await tx.insert(terminals).values({ id: terminalId, merchantId, mode, ...spec });
        createdTerminals.push({
          terminal_id: terminalId,
          mode,
          kinds: spec.kinds,
          priority: spec.priority,
          descriptor: spec.descriptor,
        });
      }
    }
    await tx
      .insert(auditLog)
      .values({ merchantId, action: 'merchant.created', details: { name: options.name } });
    return {
      merchant_id: merchantId,
      test_secret_key: keys.test,
      live_secret_key: keys.live,
      encryption_key: encryptionKey,
      webhook_secret: webhookSecret,
      wallets: createdWallets,
      terminals: createdTerminals,
    };
  });
}

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

export async function addTerminal(
  db: Db,
  merchantId: string,
  mode: Mode,
  spec: TerminalSpec,
): Promise<{ terminal_id: string }> {
  const terminalId = newId('ter');
  await db.transaction(async (tx) => {
    await tx.insert(terminals).values({ id: terminalId, merchantId, mode, ...spec });
    await tx
      .insert(auditLog)
      .values({ merchantId, action: 'terminal.added', details: { terminalId, mode, ...spec } });
  });
  return { terminal_id: terminalId };
}
