/**
 * What the API, the worker and the workflows agree on: workflow names, inputs and results, updates and
 * queries, failure types, search attributes. Side-effect free, so workflow code can import it.
 */
import { defineSearchAttributeKey } from '@temporalio/common';

export * from './inputs';
export * from './details';
export * from './updates';
export * from './workflows';
export * from './failures';
export * from './ops';
export {
  APM_CONNECTOR_METHODS,
  APM_METHODS,
  isApmMethod,
  isFinal,
  type ApmMethod,
  type Mode,
  type TransactionKind,
  type TransactionStatus,
} from '../lib/vocabulary';

/** Search attributes: identifiers and state only, never personal data. */
export const searchAttributes = {
  merchantId: defineSearchAttributeKey('MerchantId', 'KEYWORD'),
  mode: defineSearchAttributeKey('TransactionMode', 'KEYWORD'),
  kind: defineSearchAttributeKey('TransactionKind', 'KEYWORD'),
  status: defineSearchAttributeKey('TransactionStatus', 'KEYWORD'),
  orderId: defineSearchAttributeKey('OrderId', 'KEYWORD'),
};
export const allSearchAttributes = Object.values(searchAttributes);
