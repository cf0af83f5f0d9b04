export { cardPayment } from './card-payment';
export { cardPayout } from './card-payout';
export { cryptoPayin } from './crypto-payin';
export { cryptoRamp } from './crypto-ramp';
export { webhookDelivery } from './webhook-delivery';
