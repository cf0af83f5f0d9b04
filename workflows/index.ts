export { cardPayment } from './card-payment';
export { webhookDelivery } from './webhook-delivery';
