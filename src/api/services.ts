import { findMerchantBySecretKey, merchantEncryptionKeys } from '../merchants/keys';
import { merchantName } from '../merchants/accounts';
import {
  createApmPayment,
  createCardPayment,
  createHostedCardPayment,
  submitHostedCard,
} from '../transactions/card';
import { createCardPayout, estimatePayout } from '../transactions/payout';
import { createPayin } from '../transactions/payin';
import { createRamp } from '../transactions/ramp';
import { findHostedTransaction, findTransaction, lookupStatus } from '../transactions/lookup';
import { chooseApmMethod, offeredApmMethods } from '../transactions/apm-methods';
import { expireCustomerWait, submitDecision } from '../transactions/decisions';
import { linkForm, useLink } from '../transactions/link-use';
import { listTransactions, listWalletTransactions } from '../transactions/lists';
import { listWebhookEvents, redeliverMerchantEvent } from '../transactions/webhook-events';
import { requestAftercare } from '../transactions/aftercare';
import { createLink, expireLink, findLink, listTemplates } from '../transactions/links';
import { listWallets } from '../wallets/wallets';
import { listPayinCurrencies } from '../coins/catalogue';
import { simulateDeposit, testDeposit } from '../test-deposits';
import { closeDepositWindow } from '../transactions/deposits';
import type { Db } from '../db/client';
import { RateLimiter, type BucketSettings, type RateLimitDecision } from './rate-limit';

/** Hands out a key's request tokens, shared by every API process (Postgres in the service). */
export interface TokenBuckets {
  take(key: string): Promise<RateLimitDecision>;
}

/**
 * What the merchant API and the hosted pages ask of the layers below them: each route's one call, each
 * page's reads and submissions, the key and envelope lookups, and the rate limits. The service uses
 * these; the edge tests (test/edge) pass their own and run the HTTP layer with no database or Temporal
 * behind it.
 */
export const domainServices = {
  findMerchantBySecretKey,
  merchantEncryptionKeys,
  tokenBuckets: (db: Db, settings: BucketSettings): TokenBuckets => new RateLimiter(db, settings),
  createCardPayment,
  createHostedCardPayment,
  createApmPayment,
  createCardPayout,
  createPayin,
  createRamp,
  lookupStatus,
  listTransactions,
  listWalletTransactions,
  listWebhookEvents,
  redeliverMerchantEvent,
  requestAftercare,
  createLink,
  expireLink,
  listTemplates,
  listWallets,
  estimatePayout,
  listPayinCurrencies,
  simulateDeposit,
  closeDepositWindow,
  expireCustomerWait,
  // The hosted pages'.
  findHostedTransaction,
  findTransaction,
  offeredApmMethods,
  chooseApmMethod,
  submitDecision,
  submitHostedCard,
  findLink,
  linkForm,
  useLink,
  merchantName,
  testDeposit,
};

export type EdgeServices = typeof domainServices;
