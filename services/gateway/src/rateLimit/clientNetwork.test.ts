import { clientNetworkOf } from './clientNetwork';

describe('clientNetworkOf', () => {
  it('keeps an IPv4 address, and the IPv4 address in an IPv4-mapped IPv6 one', () => {
    expect(clientNetworkOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetworkOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });
  it('counts every address of an IPv6 /64 as one, however it is written', () => {
    const network = '2001:db8:0:1::/64';
    expect(clientNetworkOf('2001:db8:0:1::1')).toBe(network);
    expect(clientNetworkOf('2001:0db8:0000:0001:ffff:ffff:ffff:fffe')).toBe(network);
    expect(clientNetworkOf('2001:db8:0:1:a:b:c:d%eth0')).toBe(network);
    expect(clientNetworkOf('2001:db8:0:2::1')).not.toBe(network);
    expect(clientNetworkOf('::1')).toBe('0:0:0:0::/64');
  });
});
