export { cardPayment } from './card-payment';
export { cardPayout } from './card-payout';
export { webhookDelivery } from './webhook-delivery';
