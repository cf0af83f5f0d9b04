import { describe, expect, it } from 'vitest';
import { isPrivateAddress, judgeUrl, type UrlPolicy } from '../../src/net/address-policy';

const urlAllowed = async (url: string, policy: UrlPolicy) => (await judgeUrl(url, policy)) === 'allowed';

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
    // IPv6 spellings that reach an IPv4 host are judged by that host.
    ['::7f00:1', true], // IPv4-compatible
    ['::127.0.0.1', true],
    ['::a00:1', true],
    ['::ffff:7f00:1', true], // IPv4-mapped, hex
    ['::ffff:0:127.0.0.1', true], // IPv4-translated
    ['64:ff9b::7f00:1', true], // NAT64
    ['64:ff9b::10.0.0.1', true],
    ['64:ff9b::a9fe:a9fe', true], // NAT64 of 169.254.169.254
    ['2002:7f00:1::', true], // 6to4
    ['2002:c0a8:101::1', true], // 6to4 of 192.168.1.1
    ['2002:a9fe:a9fe::', true],
    ['64:ff9b::808:808', false], // NAT64 of a public host
    ['2002:808:808::1', false], // 6to4 of a public host
    ['::808:808', false],
    // Other IPv6 ranges that are not public.
    ['64:ff9b:1::1', true], // local-use NAT64
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true], // Teredo
    ['fec0::1', true],
    ['100::1', true],
    ['fe80::1%eth0', true],
    ['[::1]', true],
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
    ['http://[::7f00:1]/', 'live', false],
    ['http://[::127.0.0.1]/', 'live', false],
    ['http://[64:ff9b::7f00:1]/', 'live', false],
    ['http://[2002:7f00:1::]/', 'live', false],
    ['http://[::ffff:127.0.0.1]:8080/', 'live', false],
    ['http://[64:ff9b::808:808]/', 'live', true],
  ] as const)('%s in %s mode is allowed: %s', async (url, mode, allowed) => {
    expect(await urlAllowed(url, { mode, allowPrivate: false })).toBe(allowed);
  });

  it('judges a host name by every address it resolves to', async () => {
    const resolveTo =
      (...addresses: string[]) =>
      async () =>
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    const policy = (resolve: ReturnType<typeof resolveTo>) => ({
      mode: 'live' as const,
      allowPrivate: false,
      resolve,
    });
    expect(await urlAllowed('https://hooks.example/x', policy(resolveTo('8.8.8.8')))).toBe(true);
    expect(await urlAllowed('https://hooks.example/x', policy(resolveTo('8.8.8.8', '10.0.0.1')))).toBe(false);
    expect(await urlAllowed('https://hooks.example/x', policy(resolveTo('64:ff9b::7f00:1')))).toBe(false);
    expect(await urlAllowed('https://hooks.example/x', policy(resolveTo()))).toBe(false);
  });

  it('tells a name that does not resolve from a DNS that does not answer', async () => {
    const failing = (code: string) => async () => {
      throw Object.assign(new Error(code), { code });
    };
    const policy = (code: string) => ({ mode: 'live' as const, allowPrivate: false, resolve: failing(code) });
    expect(await judgeUrl('https://nowhere.example/x', policy('ENOTFOUND'))).toBe('unresolvable');
    expect(await judgeUrl('https://nowhere.example/x', policy('EAI_AGAIN'))).toBe('dns-unavailable');
    expect(await judgeUrl('https://10.0.0.1/x', policy('ENOTFOUND'))).toBe('private');
    expect(await judgeUrl('https://8.8.8.8/x', policy('ENOTFOUND'))).toBe('allowed');
  });

  it('lets configuration allow private hosts in live mode', async () => {
    expect(await urlAllowed('http://127.0.0.1/hook', { mode: 'live', allowPrivate: true })).toBe(true);
  });
});
