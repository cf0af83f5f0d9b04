import { lookup as systemLookup } from 'node:dns/promises';
import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Mode } from '../lib/vocabulary';

/** IPv4 networks no merchant URL may reach: this host, private, shared, link-local, multicast, reserved. */
const blockedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blockedV4.addSubnet(net, prefix, 'ipv4');
}

/** IPv6 networks that are not public, or that tunnel to an IPv4 host without naming it where we can judge. */
const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): translates to whatever the local network chooses
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: the client's IPv4 address is obfuscated in the low bits
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10], // site-local, deprecated but still routed by some stacks
  ['ff00::', 8],
] as const) {
  blockedV6.addSubnet(net, prefix, 'ipv6');
}

/** The eight 16-bit words of an IPv6 address, or undefined when it is not one. */
export function ipv6Words(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return undefined;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((word) => parseInt(word, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  const zeros = tail === undefined ? 0 : 8 - front.length - back.length;
  return [...front, ...Array<number>(zeros).fill(0), ...back];
}

const dottedQuad = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address stands for, when it embeds one: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`)
 * and 6to4 (`2002:aabb:ccdd::`). Such an address reaches that IPv4 host, so it is judged by it.
 */
export function embeddedIpv4(address: string): string | undefined {
  const w = ipv6Words(address);
  if (!w) return undefined;
  const zeroUpTo = (n: number) => w.slice(0, n).every((word) => word === 0);
  if (zeroUpTo(5) && w[5] === 0xffff) return dottedQuad(w[6]!, w[7]!);
  if (zeroUpTo(4) && w[4] === 0xffff && w[5] === 0) return dottedQuad(w[6]!, w[7]!);
  if (zeroUpTo(6) && (w[6] !== 0 || w[7]! > 1)) return dottedQuad(w[6]!, w[7]!);
  if (w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((word) => word === 0)) {
    return dottedQuad(w[6]!, w[7]!);
  }
  if (w[0] === 0x2002) return dottedQuad(w[1]!, w[2]!);
  return undefined;
}

/** True for loopback, private, link-local and other non-public addresses, and for anything not an address. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) return blockedV4.check(bare, 'ipv4');
  if (isIP(bare.replace(/%.*$/, '')) !== 6) return true;
  const v4 = embeddedIpv4(bare);
  if (v4 !== undefined) return blockedV4.check(v4, 'ipv4');
  return blockedV6.check(bare.replace(/%.*$/, ''), 'ipv6');
}

/** Resolves a host name to every address it has, as `dns.lookup` does. Replaceable in tests. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => systemLookup(host, { all: true, verbatim: true });

export interface UrlPolicy {
  mode: Mode;
  allowPrivate: boolean;
  resolve?: Resolver;
}

/** Test mode and ALLOW_PRIVATE_URLS let any host through. */
export const isUnguarded = (policy: UrlPolicy) => policy.mode === 'test' || policy.allowPrivate;

/** A URL's host without the brackets of an IPv6 literal. */
const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** The verdict on a host that needs no DNS (an address, or a `localhost` name); undefined for other names. */
function judgeLiteral(host: string): UrlVerdict | undefined {
  if (host === 'localhost' || host.endsWith('.localhost')) return 'private';
  if (isIP(host)) return isPrivateAddress(host) ? 'private' : 'allowed';
  return undefined;
}

/** DNS answers that say "try again", not "no such name". */
const TEMPORARY_DNS_CODES = new Set(['EAI_AGAIN', 'ESERVFAIL', 'ETIMEOUT', 'ECONNREFUSED', 'ECANCELLED']);

/**
 * What a URL may be used for: `allowed`; `private` (its host is, or resolves to, a non-public address);
 * `unresolvable` (no such host name); `dns-unavailable` (DNS did not answer now: try again later).
 */
export type UrlVerdict = 'allowed' | 'private' | 'unresolvable' | 'dns-unavailable';

/**
 * Judges a merchant URL: its host must be, and resolve only to, public addresses. Test mode and
 * `allowPrivate` skip the check. Checked when the transaction is created; a delivery checks again through
 * {@link guardedLookup}, since DNS answers can change in between.
 */
export async function judgeUrl(url: string, policy: UrlPolicy): Promise<UrlVerdict> {
  if (isUnguarded(policy)) return 'allowed';
  let host: string;
  try {
    host = bareHost(new URL(url));
  } catch {
    return 'unresolvable';
  }
  const literal = judgeLiteral(host);
  if (literal) return literal;
  let addresses: { address: string }[];
  try {
    addresses = await (policy.resolve ?? systemResolver)(host);
  } catch (error) {
    return TEMPORARY_DNS_CODES.has((error as NodeJS.ErrnoException).code ?? '')
      ? 'dns-unavailable'
      : 'unresolvable';
  }
  if (addresses.length === 0) return 'unresolvable';
  return addresses.some((a) => isPrivateAddress(a.address)) ? 'private' : 'allowed';
}

export class PrivateAddressError extends Error {
  constructor(host: string) {
    super(`${host} resolves to a private or loopback address`);
    this.name = 'PrivateAddressError';
  }
}

type LookupCallback = (
  error: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that connects only to public addresses (or to any, when the policy
 * allows it). The connection uses exactly the address checked here, so a DNS answer that changes
 * between the check and the connect (rebinding) cannot steer a delivery to an internal host.
 */
export function guardedLookup(policy: UrlPolicy) {
  const resolve = policy.resolve ?? systemResolver;
  const open = isUnguarded(policy);
  return (host: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolve(host).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new Error(`${host} has no address`), '');
        if (!open && addresses.some((a) => isPrivateAddress(a.address))) {
          return callback(new PrivateAddressError(host), '');
        }
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
}

/** Whether a literal host in a URL is allowed by the policy; host names are judged at lookup. */
export function literalHostAllowed(url: URL, policy: UrlPolicy): boolean {
  return isUnguarded(policy) || judgeLiteral(bareHost(url)) !== 'private';
}
