import { describe, expect, it } from 'vitest';
import { isPrivateAddress, urlAllowed } from '../../src/net/address-policy';

describe('private addresses', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd00::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['not-an-ip', true],
    ['8.8.8.8', false],
    ['203.0.113.7', false],
    ['2001:4860:4860::8888', false],
    ['::ffff:8.8.8.8', false],
  ])('%s is private: %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });
});

describe('merchant URLs', () => {
  it.each([
    ['http://127.0.0.1/hook', 'live', false],
    ['http://localhost:8080/hook', 'live', false],
    ['http://api.localhost/hook', 'live', false],
    ['http://[::1]/hook', 'live', false],
    ['http://10.0.0.5/hook', 'live', false],
    ['http://8.8.8.8/hook', 'live', true],
    ['not a url', 'live', false],
    ['http://127.0.0.1/hook', 'test', true],
  ] as const)('%s in %s mode is allowed: %s', async (url, mode, allowed) => {
    expect(await urlAllowed(url, { mode, allowPrivate: false })).toBe(allowed);
  });

  it('lets configuration allow private hosts in live mode', async () => {
    expect(await urlAllowed('http://127.0.0.1/hook', { mode: 'live', allowPrivate: true })).toBe(true);
  });
});
