import { describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import { fromTronAddress, toTronAddress } from '../../src/chain/tron/address';
import { EvmKeys } from '../../src/chain/evm/keys';

// Vectors checked against tronweb 6 (`TronWeb.address.fromHex`, `fromPrivateKey`) and TRON's USDT contract.
describe('TRON addresses', () => {
  it('shows the 20 bytes JSON-RPC carries as the T-address TRON shows', () => {
    expect(toTronAddress('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c')).toBe(
      'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    );
    expect(toTronAddress('0x8ba1f109551bd432803012645ac136ddd64dba72')).toBe(
      'TNhWvctD24Ju9C8qpp9T9bQpGPPw5gjA96',
    );
  });

  it("gives a key's TRON account as TRON derives it", () => {
    const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    expect(toTronAddress(account.address)).toBe('TLEaY8XoqpBmndLsjcfThgdKLN1ssNuUcF');
  });

  it('reads a T-address or hex back to lower-case hex, and nothing else', () => {
    expect(fromTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe(
      '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c',
    );
    expect(fromTronAddress('0xA614F803B6FD780986A42C78EC9C7F77E6DED13C')).toBe(
      '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c',
    );
    // One character changed: the checksum fails.
    expect(fromTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).toBeUndefined();
    // A Bitcoin address is base58check too, with another prefix.
    expect(fromTronAddress('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2')).toBeUndefined();
    expect(fromTronAddress('not an address')).toBeUndefined();
  });

  it("derives TRON deposit addresses on TRON's coin type, apart from the EVM ones of the same seed", () => {
    const seed = '00'.repeat(32);
    expect(new EvmKeys(seed, 195).depositAddress(0)).not.toBe(new EvmKeys(seed).depositAddress(0));
    expect(new EvmKeys(seed).depositAddress(0)).toBe(new EvmKeys(seed, 60).depositAddress(0));
  });
});
