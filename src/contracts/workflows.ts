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
}

export type WorkflowName = keyof WorkflowSignatures;
/** The workflows that carry a transaction, started by update-with-start. */
export type TransactionWorkflow = Exclude<
  WorkflowName,
  'webhookDelivery' | 'webhookRedelivery' | 'aftercare' | 'paymentLink'
>;
export type WorkflowInput<Name extends WorkflowName> = Parameters<WorkflowSignatures[Name]>[0];

export const workflowIds = {
  /** A transaction's workflow id is its transaction id. */
  transaction: (transactionId: string) => transactionId,
  webhook: (eventId: string, run: number) => `webhook-${eventId}-${run}`,
  /** A batch of redeliveries, named by its first event's run. */
  webhookRedelivery: (eventId: string, run: number) => `webhooks-${eventId}-${run}`,
  /** Refunds and chargebacks of a settled transaction, one at a time. */
  aftercare: (transactionId: string) => `aftercare-${transactionId}`,
  /** A payment link, open until used once or expired. */
  paymentLink: (linkId: string) => `link-${linkId}`,
};
