import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import { Address, NETWORK } from '@scure/btc-signer';
import { toTronAddress } from '../../src/chain/tron/address';
import type { ChainConnector, FiatPayouts } from './types';

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A deterministic sandbox chain: addresses and hashes derive from the transaction, so retries agree.
 * Addresses are well-formed for their network (checksums included), so a merchant's validation takes them.
 */
export function sandboxChain(): ChainConnector & FiatPayouts {
  return {
    async depositAddress({ transactionId, network }) {
      const hex = digest(`deposit:${network}:${transactionId}`);
      const bytes = Buffer.from(hex, 'hex');
      switch (network) {
        case 'BITCOIN':
          return Address(NETWORK).encode({ type: 'wpkh', hash: bytes.subarray(0, 20) });
        case 'TRON':
          return toTronAddress(`0x${hex.slice(0, 40)}`);
        case 'SOLANA':
          return base58.encode(bytes);
        case 'OMNI':
          return Address(NETWORK).encode({ type: 'pkh', hash: bytes.subarray(0, 20) });
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
