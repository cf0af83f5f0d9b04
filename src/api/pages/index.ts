import type { FastifyInstance } from 'fastify';
import type { PageDeps } from '../deps';
import { apmPageRoutes } from './apm';
import { cardCheckoutRoutes } from './card-checkout';
import { cardReturnRoutes } from './card-return';
import { cryptoCheckoutRoutes } from './crypto-checkout';
import { hostedCardPageRoutes } from './hosted-card';
import { linkPageRoutes } from './link';
import { payoutVerificationRoutes } from './payout-verification';

/** The hosted pages customers are sent to (docs/hosted.md): HTML, each with its own rate limit. */
export const pages: ((app: FastifyInstance, deps: PageDeps) => Promise<void>)[] = [
  cardCheckoutRoutes,
  hostedCardPageRoutes,
  apmPageRoutes,
  linkPageRoutes,
  cardReturnRoutes,
  payoutVerificationRoutes,
  cryptoCheckoutRoutes,
];
