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

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) =>
    expect(isForbiddenAddress(ip)).toBe(false),
  );

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
