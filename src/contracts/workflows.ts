import type {
  CardPaymentInput,
  CardPayoutInput,
  CryptoPayinInput,
  CryptoRampInput,
  WebhookDeliveryInput,
  WebhookRedeliveryInput,
  AftercareInput,
  ApmPaymentInput,
  PaymentLinkInput,
  ReconciliationInput,
  ReconciliationSummary,
} from './inputs';
import type { FirstAnswer } from './updates';

/**
 * Every workflow by its registered name, with its input and result. `workflows/index.ts` checks its
 * exports against this, and every start names a key of it: a renamed or retyped workflow, or a start
 * with the wrong input, does not compile.
 */
export interface WorkflowSignatures {
  cardPayment(input: CardPaymentInput): Promise<FirstAnswer>;
  cardPayout(input: CardPayoutInput): Promise<FirstAnswer>;
  apmPayment(input: ApmPaymentInput): Promise<FirstAnswer>;
  cryptoRamp(input: CryptoRampInput): Promise<FirstAnswer>;
  cryptoPayin(input: CryptoPayinInput): Promise<FirstAnswer>;
  webhookDelivery(input: WebhookDeliveryInput): Promise<'delivered' | 'undelivered'>;
  webhookRedelivery(input: WebhookRedeliveryInput): Promise<{ delivered: number; retrying: number }>;
  aftercare(input: AftercareInput): Promise<void>;
  paymentLink(input: PaymentLinkInput): Promise<'used' | 'expired'>;
  reconciliation(input: ReconciliationInput): Promise<ReconciliationSummary>;
}

export type WorkflowName = keyof WorkflowSignatures;
/** The workflows that carry a transaction, started by update-with-start. */
export type TransactionWorkflow = Exclude<
  WorkflowName,
  'webhookDelivery' | 'webhookRedelivery' | 'aftercare' | 'paymentLink' | 'reconciliation'
>;
/**
 * A short digest of a text (FNV-1a, 64 bits, hex): names a workflow after what it holds. Not for
 * secrets; contracts stay free of Node modules, as workflow code imports them.
 */
function digest(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

export type WorkflowInput<Name extends WorkflowName> = Parameters<WorkflowSignatures[Name]>[0];

export const workflowIds = {
  /** A transaction's workflow id is its transaction id. */
  transaction: (transactionId: string) => transactionId,
  webhook: (eventId: string, run: number) => `webhook-${eventId}-${run}`,
  /** A batch of redeliveries, named by every (event, run) it holds: the first, and a digest of them all. */
  webhookRedelivery: (runs: { eventId: string; run: number }[]) =>
    `webhooks-${runs[0]?.eventId}-${runs[0]?.run}-${runs.length}-${digest(runs.map((r) => `${r.eventId}.${r.run}`).join(','))}`,
  /** Refunds and chargebacks of a settled transaction, one at a time. */
  aftercare: (transactionId: string) => `aftercare-${transactionId}`,
  /** A payment link, open until used once or expired. */
  paymentLink: (linkId: string) => `link-${linkId}`,
  /** The reconciliation schedule of a task queue; its runs are named after it and the time they start. */
  reconciliationSchedule: (taskQueue: string) => `reconciliation-${taskQueue}`,
  /** A reconciliation run asked for by hand. */
  reconciliationRun: (suffix: string) => `reconciliation-run-${suffix}`,
};
