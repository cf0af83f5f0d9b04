import { createHash } from 'node:crypto';
import type { ChainConnector, FiatPayouts } from './types';

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** A deterministic sandbox chain: addresses and hashes derive from the transaction, so retries agree. */
export function sandboxChain(): ChainConnector & FiatPayouts {
  return {
    async depositAddress({ transactionId, network }) {
      const hex = digest(`deposit:${network}:${transactionId}`);
      switch (network) {
        case 'BITCOIN':
          return `bc1q${hex.slice(0, 38)}`;
        case 'TRON':
          return `T${hex.slice(0, 33)}`;
        case 'SOLANA':
          return hex.slice(0, 44);
        case 'OMNI':
          return `1${hex.slice(0, 33)}`;
        default:
          return `0x${hex.slice(0, 40)}`;
      }
    },
    async send(request) {
      return `0x${digest(`send:${request.idempotencyKey}:${request.network}:${request.address}:${request.amount}`)}`;
    },
    async payout(request) {
      return `sbxf_${digest(`fiat:${request.idempotencyKey}`).slice(0, 24)}`;
    },
  };
}
