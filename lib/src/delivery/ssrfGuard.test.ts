import { AppError } from '../errors';
import { assertPublicUrl, guardedLookup, isForbiddenAddress } from './ssrfGuard';

describe('SSRF guard', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    'not-an-ip',
  ])('forbids %s', (ip) => expect(isForbiddenAddress(ip)).toBe(true));

  it.each([
    ['TEST-NET-1', '192.0.2.1'],
    ['TEST-NET-2', '198.51.100.7'],
    ['TEST-NET-3', '203.0.113.255'],
    ['the deprecated 6to4 relay anycast', '192.88.99.1'],
    ['IPv6 documentation', '2001:db8::1'],
    ['IPv6 documentation (RFC 9637)', '3fff:0fff::1'],
    ['IPv6 discard-only', '100::1'],
    ['IPv6 benchmarking', '2001:2::1'],
    ['deprecated site-local', 'fec0::1'],
    ['SRv6 segment ids', '5f00::1'],
    ['IPv4-compatible (deprecated) of loopback', '::127.0.0.1'],
    ['IPv4-compatible (deprecated) of a public address', '::8.8.8.8'],
    ['IPv4-translated', '::ffff:0:7f00:1'],
    ['NAT64', '64:ff9b::7f00:1'],
    ['local-use NAT64', '64:ff9b:1::808:808'],
    ['6to4 of loopback', '2002:7f00:1::'],
    ['6to4 of loopback, another host', '2002:7f00:1:1::5'],
    ['6to4 of a private address', '2002:a00:1::1'],
    ['6to4 of 192.168.1.1', '2002:c0a8:101::1'],
    ['6to4 of cloud metadata', '2002:a9fe:a9fe::'],
    ['6to4 of TEST-NET-3', '2002:cb00:7101::'],
    ['Teredo whose client is loopback (obfuscated)', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['Teredo whose client is private', '2001:0:4136:e378:8000:63bf:f5ff:fffe'],
    ['Teredo whose server is private', '2001:0:a00:1:8000:63bf:f7f7:f7f7'],
  ])('forbids %s (%s)', (_name, ip) => expect(isForbiddenAddress(ip)).toBe(true));

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '192.169.0.1',
    '192.0.3.1',
    '198.51.101.1',
    '203.0.114.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2001:db9::1',
    // 6to4 and Teredo of public IPv4 addresses are addresses of the public internet.
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ])('allows %s', (ip) => expect(isForbiddenAddress(ip)).toBe(false));

  it('refuses a URL whose host resolves to a private address, and accepts a public one', async () => {
    const resolve = async (host: string): Promise<string[]> => (host === 'internal.example' ? ['93.184.216.34', '10.0.0.5'] : ['93.184.216.34']);
    await expect(assertPublicUrl('https://internal.example/hook', { allowPrivate: false, resolve })).rejects.toMatchObject({
      code: 'webhook_url_forbidden',
    });
    await expect(assertPublicUrl('https://public.example/hook', { allowPrivate: false, resolve })).resolves.toBeUndefined();
    await expect(assertPublicUrl('http://[::1]:8080/', { allowPrivate: false })).rejects.toBeInstanceOf(AppError);
    await expect(assertPublicUrl('http://127.0.0.1/', { allowPrivate: true })).resolves.toBeUndefined();
  });

  it('refuses localhost when resolving, and answers unresolvable hosts with a clear error', async () => {
    await expect(assertPublicUrl('http://localhost:3000/', { allowPrivate: false })).rejects.toMatchObject({ code: 'webhook_url_forbidden' });
    await expect(assertPublicUrl('http://x.invalid/', { allowPrivate: false })).rejects.toMatchObject({ code: 'webhook_url_unresolvable' });
  });

  it('fails connections whose lookup lands on a forbidden address (DNS rebinding)', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup('localhost', {}, (e) => resolve(e)));
    expect(error?.code).toBe('EFORBIDDEN');
  });
});
