import { HDKey } from '@scure/bip32';
import { bytesToHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

/** BIP-32 indexes below this are unhardened; one seed gives this many deposit addresses. */
const MAX_INDEX = 2 ** 31 - 1;

/**
 * The keys of one watched node, from its HD seed (BIP-44 paths, coin type 60): the treasury that sends
 * and refunds at m/44'/60'/0'/0/0, deposit address `i` at m/44'/60'/1'/0/i. Deposit addresses are never
 * spent from here; their funds stay until swept (docs/connectors.md).
 */
export class ChainKeys {
  private readonly root: HDKey;

  constructor(seedHex: string) {
    this.root = HDKey.fromMasterSeed(Buffer.from(seedHex, 'hex'));
  }

  treasury(): PrivateKeyAccount {
    return this.account("m/44'/60'/0'/0/0");
  }

  depositAddress(index: number): string {
    if (!Number.isSafeInteger(index) || index < 0 || index > MAX_INDEX) {
      throw new Error(`deposit address index ${index} is outside 0..${MAX_INDEX}`);
    }
    return this.account(`m/44'/60'/1'/0/${index}`).address.toLowerCase();
  }

  private account(path: string): PrivateKeyAccount {
    const key = this.root.derive(path).privateKey;
    if (!key) throw new Error(`no private key at ${path}`);
    return privateKeyToAccount(bytesToHex(key) as Hex);
  }
}
