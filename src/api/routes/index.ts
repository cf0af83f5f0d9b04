import type { Api } from '../route';
import type { RouteDeps } from '../deps';
import { aftercareRoutes } from './aftercare';
import { apmRoutes } from './apm';
import { cardRoutes } from './card';
import { cryptoDepositRoutes } from './crypto-deposit';
import { currencyRoutes } from './currencies';
import { healthRoutes } from './health';
import { hostedCardRoutes } from './hosted-card';
import { linkRoutes } from './links';
import { listRoutes } from './lists';
import { payinRoutes } from './payin';
import { payoutRoutes } from './payout';
import { rampRoutes } from './ramp';
import { sandboxWebhookRoutes } from './sandbox-webhook';
import { statusRoutes } from './status';
import { walletRoutes } from './wallets';
import { webhookEventRoutes } from './webhook-events';

/** The merchant API's JSON routes, each adding hooks and a handler to its declared endpoint. */
export const merchantRoutes: ((app: Api, deps: RouteDeps) => Promise<void>)[] = [
  cardRoutes,
  hostedCardRoutes,
  apmRoutes,
  linkRoutes,
  payoutRoutes,
  rampRoutes,
  payinRoutes,
  cryptoDepositRoutes,
  currencyRoutes,
  statusRoutes,
  walletRoutes,
  aftercareRoutes,
  listRoutes,
  webhookEventRoutes,
  sandboxWebhookRoutes,
  healthRoutes,
];
