/** Payment links and the templates they are made from. */
import { endpoint, linkAnswer } from './declare';
import { CryptoLinkRequest, LinkParams, LinkRequest } from '../requests';
import { LinkState, PaymentLink, TemplateList } from '../answers';

export const listPaymentTemplates = endpoint({
  method: 'GET',
  url: '/api/v1/payment-templates',
  schema: {
    operationId: 'listPaymentTemplates',
    tags: ['Payment links'],
    summary: "The key's mode's payment page templates",
    description: 'Templates are added with `npx payments templates add`.',
    response: { 200: TemplateList },
  },
  config: {
    reference: { answer: { description: 'The templates, oldest first.' } },
  },
});

export const createPaymentLink = endpoint({
  method: 'POST',
  url: '/api/v1/payment-link',
  schema: {
    operationId: 'createPaymentLink',
    tags: ['Payment links'],
    summary: 'Card payment link',
    description:
      'A link to a page that collects the customer (and the amount, when not fixed) and continues as a ' +
      'hosted card payment. One payment per link, until `expiry_date`. Plain JSON or the envelope.',
    body: LinkRequest,
    response: { 200: PaymentLink },
  },
  config: { reference: linkAnswer },
});

export const createCryptoPaymentLink = endpoint({
  method: 'POST',
  url: '/api/v1/crypto/payment-link',
  schema: {
    operationId: 'createCryptoPaymentLink',
    tags: ['Payment links'],
    summary: 'Crypto payment link (ONRAMP, OFFRAMP, PAYIN)',
    description:
      'A link to a page that collects the customer and creates the ramp or payin the link fixes. Plain ' +
      'JSON or the envelope.',
    body: CryptoLinkRequest,
    response: { 200: PaymentLink },
  },
  config: { reference: linkAnswer },
});

export const expirePaymentLink = endpoint({
  method: 'POST',
  url: '/api/v1/:mode/payment-link/:id/expire',
  schema: {
    operationId: 'expirePaymentLink',
    tags: ['Payment links'],
    summary: 'Expire a payment link now (test mode)',
    description:
      'Expires an unused link at once, as if its `expiry_date` had come: its page then tells the customer ' +
      'so and takes no payment (docs/sandbox.md). A link a customer already used stays used.',
    params: LinkParams,
    response: { 200: LinkState },
  },
  config: {
    reference: {
      answer: { description: 'The link, expired (or used, when a customer came first).' },
      refusals: ['LINK_NOT_FOUND'],
      testOnly: true,
    },
  },
});
