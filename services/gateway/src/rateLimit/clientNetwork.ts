import { isIPv6 } from 'node:net';

/**
 * Whom requests without a valid credential count for: an IPv4 address as it is, an IPv6 address by its /64. One
 * host or subscriber usually holds a whole /64, so keying on the address would let it guess tokens from 2^64
 * addresses, each with a fresh allowance. An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export const clientNetworkOf = (ip: string): string => {
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
};
