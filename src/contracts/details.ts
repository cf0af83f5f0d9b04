/**
 * The kind-specific fields of a transaction (the `details` column), as the status body shows them.
 * Decimal amounts are exact decimal strings; the status body writes them as JSON numbers.
 */

export type CardDetails = {
  is_card_WL: boolean;
};

/** How a crypto payment stands: what arrived, where to send it, until when. */
export type CryptoSettlementDetails = {
  crypto_payment_status: 'FULLPAID' | 'OVERPAID' | 'UNDERPAID' | null;
  crypto_paid_amount: string;
  deposit_address: string;
  expires_at: string;
  /** Crypto sent back to the customer, once anything was. */
  refund_amount?: string;
};

/** Type aliases, not interfaces: a details object must also be a plain record for the projection. */
export type PayinDetails = Partial<CryptoSettlementDetails> & {
  crypto_currency: string;
  crypto_network: string;
  crypto_amount: string;
};

export type RampDetails = Partial<CryptoSettlementDetails> & {
  transaction_type: 'ONRAMP' | 'OFFRAMP';
  fiat: string;
  fiat_amount: string;
  crypto: string;
  crypto_amount: string;
  crypto_network: string;
  wallet_address: string;
  /** Fiat per one crypto unit, as quoted. */
  rate?: string;
  /** ONRAMP: the chain transaction that sent the crypto. */
  tx_hash?: string;
  /** OFFRAMP: the fiat payout's reference. */
  fiat_payout_reference?: string;
};

/** The method the customer picked, once picked. */
export type ApmDetails = {
  payment_method: string;
};

export interface TransactionDetails {
  card: CardDetails;
  apm: ApmDetails;
  payout: Record<string, never>;
  ramp: RampDetails;
  crypto_payin: PayinDetails;
}

/** The decimal fields of any kind's details, written as exact JSON numbers. */
export const DECIMAL_DETAIL_KEYS: readonly string[] = [
  'fiat_amount',
  'crypto_amount',
  'crypto_paid_amount',
  'rate',
  'refund_amount',
];
