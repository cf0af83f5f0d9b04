import type { Client } from '@temporalio/client';
import type { Config } from '../platform/config';
import type { Db } from '../db/client';
import type { Logger } from '../platform/log';
import type { RateSource } from '../coins/rates';
import type { Resolver } from '../net/address-policy';
import type { Mode } from '../lib/vocabulary';

/** What the transaction services need: storage, Temporal, prices, and the settings they act on. */
export interface TransactionDeps {
  db: Db;
  temporal: Client;
  log: Logger;
  rates: RateSource;
  /** Resolves merchant host names when URLs are checked; the system resolver unless a test replaces it. */
  resolve?: Resolver | undefined;
  config: Pick<
    Config,
    | 'MASTER_KEY'
    | 'baseUrl'
    | 'ALLOW_PRIVATE_URLS'
    | 'ALLOW_SANDBOX_IN_LIVE'
    | 'TEMPORAL_TASK_QUEUE'
    | 'FIRST_ANSWER_TIMEOUT_MS'
    | 'CARD_CHALLENGE_TIMEOUT_SECONDS'
    | 'PAYOUT_VERIFICATION_TIMEOUT_SECONDS'
    | 'PAYOUT_SEND_WINDOW_SECONDS'
  >;
}

/** The authenticated merchant and the mode its key belongs to: every lookup stays inside them. */
export interface MerchantScope {
  merchantId: string;
  mode: Mode;
}

/** The hosted page a transaction sends its customer to. */
export function hostedPageUrl(
  config: Pick<Config, 'baseUrl'>,
  mode: Mode,
  page: 'card/checkout' | 'hosted/card' | 'apm' | 'apm/provider' | 'payout/verification' | 'crypto/checkout',
  transactionId: string,
): string {
  return `${config.baseUrl}/api/v1/${mode}/${page}/${transactionId}`;
}
