import type { Db } from '../src/db/client';
import type { Config } from '../src/platform/config';
import type { Resolver } from '../src/net/address-policy';
import { webhookSchedule } from '../src/platform/config';
import { projectionActivities, type TerminalChoice, type TerminalQuery } from './projection';
import { cardActivities } from './cards';
import { webhookActivities } from './webhooks';
import { sandboxAcquirer } from './connectors/sandbox-acquirer';
import { stripeAcquirer } from './connectors/stripe';
import { sandboxPayouts } from './connectors/sandbox-payouts';
import type { CardAcquirer, PayoutProcessor } from './connectors/types';
import { payoutActivities, type PayoutOptions } from './payouts';
import { ledgerActivities } from './ledger';
import { cryptoActivities, type CryptoSettings, type DepositQuery } from './crypto';
import { opsActivities } from './ops';
import { aftercareActivities } from './aftercare';
import { sandboxChain } from './connectors/sandbox-chain';
import { nodeChains } from './connectors/node-chains';
import { sandboxApm } from './connectors/sandbox-apm';
import { apmActivities } from './apm';
import { linkActivities } from './links';
import { runAuthority, type BindRunInput } from './authority';
import { reconciliationActivities } from './reconciliation';
import type { WorkerMetrics } from '../src/platform/metrics';
import type { Mode } from '../src/contracts';
import type { Client } from '@temporalio/client';

export interface ActivityDeps {
  db: Db;
  config: Config;
  cardConnectors?: Record<string, CardAcquirer>;
  payoutConnectors?: Record<string, PayoutProcessor>;
  /** Resolves merchant host names (webhook delivery); the system resolver unless a test replaces it. */
  resolve?: Resolver;
  /** Where the worker's metrics are counted (docs/operations.md, metrics); none in most tests. */
  metrics?: WorkerMetrics;
  /** Runs between the steps of a payout's combined step: fault-injection tests throw there. */
  afterPayoutStep?: PayoutOptions['afterStep'];
  /**
   * The Temporal client, for what only a run's history says: who started a run the service refuses, who
   * Reset one (the audit trail). Without it those are recorded as `unknown`.
   */
  temporal?: () => Client | undefined;
  /** Replaces activities by name: fault-injection tests wrap real ones to simulate crashes. */
  wrap?: (activities: BoundActivities) => Partial<BoundActivities>;
}

/** Every activity a worker runs, the run authority's included. */
type BoundActivities = ReturnType<typeof withBinding>;

/** Every activity, built once per worker over its dependencies. */
export function createActivities(deps: ActivityDeps) {
  const authority = runAuthority(deps.db, { masterKey: deps.config.MASTER_KEY, temporal: deps.temporal });
  const built = withBinding(buildActivities(deps), authority.activities);
  const activities = guarded(built, authority.assertServiceRun);
  return { ...activities, ...deps.wrap?.(activities) };
}

/**
 * What a workflow's first step fetches besides binding its run, so that it starts with one local activity
 * instead of several (absent from runs from before, which fetch each in a step of its own): a card
 * payment's terminals, a deposit-taking transaction's settings and deposit address.
 */
export interface FirstStepRequest {
  terminals?: TerminalQuery;
  deposits?: DepositQuery;
}

/** What the first step fetched, once the run is bound. */
export interface FirstStepResult {
  terminals?: TerminalChoice[];
  deposits?: { settings: CryptoSettings; address: string };
}

/**
 * The run authority's activities, with `bindRun` also fetching what its caller asks for
 * (`FirstStepRequest`), only once the run is bound: nothing is read or opened for a run the service did
 * not start.
 */
function withBinding(
  activities: ReturnType<typeof buildActivities>,
  authority: ReturnType<typeof runAuthority>['activities'],
) {
  return {
    ...activities,
    ...authority,
    async bindRun(args: BindRunInput & FirstStepRequest): Promise<{ refused?: string } & FirstStepResult> {
      const { terminals, deposits, ...binding } = args;
      const bound = await authority.bindRun(binding);
      if (bound.refused !== undefined) return bound;
      const result: FirstStepResult = {};
      if (terminals) result.terminals = await activities.listTerminals(terminals);
      if (deposits) {
        const { merchantId, cryptoCurrency, ...address } = deposits;
        result.deposits = {
          settings: await activities.cryptoSettings({ merchantId, cryptoCurrency }),
          address: await activities.openDepositAddress({ ...address, currency: cryptoCurrency }),
        };
      }
      return result;
    },
  };
}

/**
 * The same activities without the check that their run is the service's: for tests that recreate, by
 * hand and outside any run, what a run did before its workflow task was lost.
 */
export function activitiesOutsideAnyRun(deps: ActivityDeps) {
  const authority = runAuthority(deps.db, { masterKey: deps.config.MASTER_KEY, temporal: deps.temporal });
  return withBinding(buildActivities(deps), authority.activities);
}

/**
 * The activities that move money, call a connector for a customer or write what a transaction, link or
 * refund shows: each runs only in a run the service started for its record (activities/authority.ts).
 */
const ACT_FOR_A_RECORD = [
  'project',
  'authorizeCard',
  'closeAuthorizations',
  'completeChallenge',
  'cancelAuthorization',
  'refundCard',
  'startApm',
  'completeApm',
  'cancelApm',
  'reserveAndSendPayout',
  'closePayoutSends',
  'confirmPayout',
  'releaseFunds',
  'settleFunds',
  'creditFunds',
  'reverseCredit',
  'openDepositAddress',
  'recordDeposit',
  'refundDeposit',
  'refundPayment',
  'holdDeposit',
  'sendCrypto',
  'payoutFiat',
  'markAftercare',
  'markLinkUsed',
  'markLinkExpired',
  'recordAndDeliverWebhook',
] as const;

function guarded<T extends Record<string, (input: never) => Promise<unknown>>>(
  activities: T,
  assertServiceRun: () => Promise<void>,
): T {
  const checked: Record<string, (input: never) => Promise<unknown>> = { ...activities };
  for (const name of ACT_FOR_A_RECORD) {
    const run = activities[name];
    if (!run) throw new Error(`no activity ${name} to guard`);
    checked[name] = async (input) => {
      await assertServiceRun();
      return run(input);
    };
  }
  return checked as T;
}

/** The ledger activities that change a balance, and the operation each is counted as. */
const LEDGER_OPERATIONS: Record<string, string> = {
  creditFunds: 'credit',
  releaseFunds: 'release',
  settleFunds: 'settle',
  reverseCredit: 'reverse',
};

/** The same activities, counting each completion under the activity's name. */
function countCompletions<T extends Record<string, (input: never) => Promise<unknown>>>(
  activities: T,
  count: ((name: string) => void) | undefined,
): T {
  if (!count) return activities;
  const counted: Record<string, (input: never) => Promise<unknown>> = {};
  for (const [name, run] of Object.entries(activities)) {
    counted[name] = async (input) => {
      const result = await run(input);
      count(name);
      return result;
    };
  }
  return counted as T;
}

function buildActivities({
  db,
  config,
  cardConnectors,
  payoutConnectors,
  resolve,
  metrics,
  afterPayoutStep,
  temporal,
}: ActivityDeps) {
  const schedule = webhookSchedule(config);
  const projection = projectionActivities(db, { allowSandboxInLive: config.ALLOW_SANDBOX_IN_LIVE, metrics });
  const ledger = ledgerActivities(db);
  return {
    ...projection,
    /** What a payout checks and routes by, read in one step: its wallet and the merchant's payout terminals. */
    async payoutSetup(input: { walletId: string; merchantId: string; mode: Mode; terminalId?: string }) {
      const [wallet, terminals] = await Promise.all([
        ledger.getWallet({ walletId: input.walletId }),
        projection.listTerminals({ ...input, kind: 'payout' }),
      ]);
      return { wallet, terminals };
    },
    ...cardActivities(
      db,
      { masterKey: config.MASTER_KEY, baseUrl: config.baseUrl },
      cardConnectors ?? {
        'sandbox-acquirer': sandboxAcquirer(db),
        stripe: stripeAcquirer(config.STRIPE_API_URL ? { apiUrl: config.STRIPE_API_URL } : {}),
      },
    ),
    ...payoutActivities(
      db,
      config.MASTER_KEY,
      payoutConnectors ?? { 'sandbox-payouts': sandboxPayouts(db) },
      {
        countLedger: metrics && ((operation) => metrics.ledgerOperations.inc({ operation })),
        afterStep: afterPayoutStep,
      },
    ),
    ...apmActivities(db, config.MASTER_KEY, {
      'sandbox-bank': sandboxApm(db, 'sandbox-bank'),
      'sandbox-wallet': sandboxApm(db, 'sandbox-wallet'),
    }),
    ...countCompletions(
      ledger,
      metrics &&
        ((name) => {
          const operation = LEDGER_OPERATIONS[name];
          if (operation) metrics.ledgerOperations.inc({ operation });
        }),
    ),
    ...cryptoActivities(db, nodeChains(db, config.MASTER_KEY, sandboxChain())),
    ...opsActivities(db, schedule),
    ...aftercareActivities(db),
    ...linkActivities(db),
    ...reconciliationActivities({
      db,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      lagMs: config.RECONCILIATION_LAG_SECONDS * 1000,
      temporal,
      stripe: {
        masterKey: config.MASTER_KEY,
        ...(config.STRIPE_API_URL ? { apiUrl: config.STRIPE_API_URL } : {}),
      },
    }),
    ...webhookActivities(db, {
      masterKey: config.MASTER_KEY,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivateUrls: config.ALLOW_PRIVATE_URLS,
      resolve,
      metrics,
      ...schedule,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
