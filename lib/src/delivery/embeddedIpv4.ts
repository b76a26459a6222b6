/**
 * The IPv4 addresses an IPv6 address of a transition mechanism carries, for the SSRF guard: such an address is
 * reached through the IPv4 address it embeds, so one that embeds a loopback or private address must be refused like
 * that address. Neither node:net (the guard's BlockList) nor ipaddr.js extracts them, hence this.
 */

/** The eight 16-bit groups of a valid IPv6 address (net.isIP(ip) === 6), its zone id ignored. */
const groupsOf = (ip: string): number[] => {
  let text = ip.split('%')[0]!;
  // A dotted IPv4 tail (::ffff:1.2.3.4, 2002::1.2.3.4) is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const [head = '', tail] = text.split('::');
  if (tail === undefined) return parse(head);
  const before = parse(head);
  const after = parse(tail);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
};

const ipv4Of = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

/**
 * The IPv4 addresses `ip` (a valid IPv6 address) embeds: a 6to4 address (2002::/16, RFC 3056) its site's address in
 * bits 16-47; a Teredo address (2001::/32, RFC 4380) its server's in bits 32-63 and its client's, inverted, in the
 * last 32 bits (both are checked: neither belongs in a public address). None for other addresses. NAT64 and the
 * IPv4-compatible and -translated forms are refused whole by the guard's ranges, so they need no extraction.
 */
export const embeddedIpv4 = (ip: string): string[] => {
  const groups = groupsOf(ip);
  if (groups.length !== 8) return [];
  const [first, second, third, fourth, , , seventh, eighth] = groups as [number, number, number, number, number, number, number, number];
  if (first === 0x2002) return [ipv4Of(second, third)];
  if (first === 0x2001 && second === 0) return [ipv4Of(third, fourth), ipv4Of(seventh ^ 0xffff, eighth ^ 0xffff)];
  return [];
};
