import type { WorkflowSignatures } from '../src/contracts';
import { cardPayment } from './card-payment';
import { cardPayout } from './card-payout';
import { cryptoPayin } from './crypto-payin';
import { cryptoRamp } from './crypto-ramp';
import { webhookDelivery, webhookRedelivery } from './webhook-delivery';
import { aftercare } from './aftercare';
import { apmPayment } from './apm-payment';
import { paymentLink } from './payment-link';
import { reconciliation } from './reconciliation';

export {
  aftercare,
  apmPayment,
  cardPayment,
  cardPayout,
  cryptoPayin,
  cryptoRamp,
  paymentLink,
  reconciliation,
  webhookDelivery,
  webhookRedelivery,
};

// Every start names a key of WorkflowSignatures: a workflow renamed or retyped here fails to compile,
// and with it every start that names it.
const registered = {
  apmPayment,
  cardPayment,
  cardPayout,
  cryptoPayin,
  cryptoRamp,
  webhookDelivery,
  webhookRedelivery,
  aftercare,
  paymentLink,
  reconciliation,
} satisfies WorkflowSignatures;
void registered;
