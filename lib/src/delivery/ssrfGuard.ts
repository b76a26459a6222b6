import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns';
import { promises as dns } from 'node:dns';
import { invalidArgument } from '../errors';
import { embeddedIpv4 } from './embeddedIpv4';

/**
 * Addresses a webhook must never reach unless the operator allows private networks: those of the IANA special-purpose
 * registries that are not globally reachable (documentation ranges included: no server of the internet has them).
 */
const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network, unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated, RFC 7526)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated, RFC 4291: ::127.0.0.1 would be loopback)
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 6145), meaningful only behind a translator
  ['64:ff9b::', 96], // NAT64 (embeds IPv4)
  ['64:ff9b:1::', 48], // NAT64, local use (RFC 8215)
  ['100::', 64], // discard-only
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 segment identifiers
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/**
 * True for loopback, private, link-local, metadata, multicast, documentation and reserved addresses, and for IPv6
 * addresses that embed one of them: IPv4-mapped, 6to4 and Teredo.
 */
export const isForbiddenAddress = (ip: string): boolean => {
  const family = isIP(ip);
  if (family === 4) return forbidden.check(ip, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return forbidden.check(mapped[1]!, 'ipv4');
  return forbidden.check(ip, 'ipv6') || embeddedIpv4(ip).some((v4) => forbidden.check(v4, 'ipv4'));
};

const refuse = (host: string, ip: string, field = 'webhook_url', setting?: string) =>
  invalidArgument(
    `${field}_forbidden`,
    `${field} resolves to ${ip} (${host}), a private or reserved address, which is not allowed` +
      (setting ? ` (an operator who needs it, e.g. for a receiver on the same machine, sets ${setting}=true)` : ''),
  );

export interface PublicUrlOptions {
  allowPrivate: boolean;
  /** The input's name in error codes and messages (default webhook_url). */
  field?: string;
  /** The operator's setting that allows private networks, named in the refusal: someone trying it locally needs it. */
  setting?: string;
  resolve?: (host: string) => Promise<string[]>;
}

const resolveAll = async (host: string): Promise<string[]> => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** A URL's host as an address or a name: an IPv6 literal without its brackets. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/**
 * The URL's host when it is an IP literal of a forbidden address, else null. Connections to a literal skip DNS, so
 * `guardedLookup` never sees them: a client connecting with it checks them with this.
 */
export const forbiddenLiteralHost = (url: URL): string | null => {
  const host = hostOf(url);
  return isIP(host) && isForbiddenAddress(host) ? host : null;
};

/** Refuses a URL whose host is, or resolves to, a forbidden address (checked at set_webhook time). */
export const assertPublicUrl = async (url: string, options: PublicUrlOptions): Promise<void> => {
  if (options.allowPrivate) return;
  const host = hostOf(new URL(url));
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await (options.resolve ?? resolveAll)(host);
  } catch {
    const field = options.field ?? 'webhook_url';
    throw invalidArgument(`${field}_unresolvable`, `${field} host ${host} does not resolve`);
  }
  const bad = addresses.find(isForbiddenAddress);
  if (bad !== undefined) throw refuse(host, bad, options.field, options.setting);
};

/**
 * A `dns.lookup` for the HTTP client's connections that fails on forbidden addresses, so a host that resolved to
 * a public address at set_webhook time and to a private one later (DNS rebinding) is still never reached.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as Array<{ address: string; family: number }>;
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad) return callback(Object.assign(refuse(hostname, bad.address), { code: 'EFORBIDDEN' }), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
    const first = list[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
    callback(null, first.address, first.family);
  });
};
