import { TtlCache } from '../lib/ttl-cache';
import { addApiKeys } from './keys';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { auditLog, merchants, terminals, wallets, webhookSecrets } from '../db/schema/index';
import { encryptSecret } from '../ciphers/secrets';
import { newEncryptionKey, newSecretKey } from '../ciphers/keys';
import { newId } from '../ciphers/ids';
import { MODES, type Mode } from '../lib/vocabulary';
import { isSandboxConnector, type TerminalSpec } from '../schemas/sandbox-cards';
import { creditWallet } from '../wallets/ledger';

export interface WalletSpec {
  currency: string;
  /** The opening balance of the wallet in each mode, in minor units. */
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

export async function createMerchant(
  db: Db,
  masterKey: string,
  options: {
    name: string;
    wallets: WalletSpec[];
    terminals: TerminalSpec[];
    /** Whether live mode gets the sandbox terminals among `terminals` too (only with ALLOW_SANDBOX_IN_LIVE). */
    liveSandbox?: boolean;
  },
): Promise<MerchantCredentials> {
  const merchantId = newId('mer');
  const keys = { test: newSecretKey('test'), live: newSecretKey('live') };
  const encryptionKey = newEncryptionKey();
  const webhookSecret = encryptionKey;
  return db.transaction(async (tx) => {
    const secretEnc = encryptSecret(webhookSecret, masterKey);
    await tx.insert(merchants).values({ id: merchantId, name: options.name, webhookSecretEnc: secretEnc });
    await tx.insert(webhookSecrets).values({ merchantId, secretEnc });
    await addApiKeys(tx, masterKey, merchantId, keys, encryptionKey);
    const createdWallets: MerchantCredentials['wallets'] = [];
    const createdTerminals: MerchantCredentials['terminals'] = [];
    for (const mode of MODES) {
      for (const spec of options.wallets) {
        const walletId = newId('wal');
        await tx.insert(wallets).values({ id: walletId, merchantId, mode, currency: spec.currency });
        // The contract's opening balance, in each mode: the sandbox merchant's wallets and `merchants create
        // --wallet CUR:AMOUNT` alike (docs/sandbox.md).
        const opening = spec.amount;
        if (opening > 0n) await creditWallet(tx, walletId, `opening_${walletId}`, opening);
        createdWallets.push({
          wallet_id: walletId,
          mode,
          currency: spec.currency,
          amount: opening.toString(),
        });
      }
      for (const spec of options.terminals) {
        if (mode === 'live' && isSandboxConnector(spec.connector) && options.liveSandbox !== true) continue;
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

/** Whether a merchant of this id exists (the CLI names an unknown one instead of failing on a key). */
export async function merchantExists(db: Db, merchantId: string): Promise<boolean> {
  const [row] = await db.select({ id: merchants.id }).from(merchants).where(eq(merchants.id, merchantId));
  return row !== undefined;
}

/** Merchant names, as the lists' `user` and the hosted pages show them: they change rarely. */
const names = new TtlCache<string, string>(60_000, 10_000);

/** The merchant's name ('' for an id that names none), read at most once a minute per process. */
export async function merchantName(db: Db, merchantId: string): Promise<string> {
  const known = names.get(merchantId);
  if (known !== undefined) return known;
  const [owner] = await db
    .select({ name: merchants.name })
    .from(merchants)
    .where(eq(merchants.id, merchantId));
  const name = owner?.name ?? '';
  names.set(merchantId, name);
  return name;
}
