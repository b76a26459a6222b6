import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkHop, createMediaFetcher, MAX_MEDIA_REDIRECTS, MediaError, type MediaLimits } from './mediaFetcher';

// Against a local HTTP server (127.0.0.1 only); private networks are allowed so the fetcher may reach it.
type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
let server: Server;
let base: string;
const stalled: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', base).pathname;
    const route = routes.get(path);
    if (route) return route(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  routes.clear();
  for (const res of stalled.splice(0)) res.destroy();
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const file: Route = (_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(1000, 1));
const redirect =
  (location: string, status = 302): Route =>
  (_req, res) =>
    void res.writeHead(status, { location }).end('moved');

const fetcher = (limits: Partial<MediaLimits> = {}) => createMediaFetcher({ maxBytes: 1_000_000, timeoutMs: 5_000, allowPrivateNetworks: true, ...limits });
const outcome = async (path: string, limits: Partial<MediaLimits> = {}) => {
  const media = fetcher(limits);
  const started = Date.now();
  try {
    const fetched = await media.fetch(`${base}${path}`, null, null);
    return { size: fetched.data.length, filename: fetched.filename, ms: Date.now() - started };
  } catch (error) {
    return { error: (error as Error).message, transient: error instanceof MediaError && error.transient, ms: Date.now() - started };
  } finally {
    await media.close();
  }
};

describe('media fetch redirects', () => {
  it.each([301, 302, 303, 307, 308])('follows a %i to the file (pre-signed links, CDNs and share links redirect)', async (status) => {
    routes.set('/file.png', file);
    routes.set('/moved', redirect(`${base}/file.png`, status));
    expect(await outcome('/moved')).toMatchObject({ size: 1000, filename: 'file.png' });
  });

  it('follows a relative Location, and up to 5 redirects in a row', async () => {
    routes.set('/files/file.png', file);
    for (let hop = 1; hop <= MAX_MEDIA_REDIRECTS; hop++) routes.set(`/hop${hop}`, redirect(hop === MAX_MEDIA_REDIRECTS ? 'files/file.png' : `/hop${hop + 1}`));
    expect(MAX_MEDIA_REDIRECTS).toBe(5);
    expect(await outcome('/hop1')).toMatchObject({ size: 1000, filename: 'file.png' });
  });

  it('fails a sixth redirect, a loop, a redirect without a usable Location and one to another scheme, with credentials or to port 0', async () => {
    for (let hop = 1; hop <= MAX_MEDIA_REDIRECTS + 1; hop++) routes.set(`/hop${hop}`, redirect(`/hop${hop + 1}`));
    routes.set(`/hop${MAX_MEDIA_REDIRECTS + 2}`, file);
    routes.set('/loop', redirect('/loop'));
    routes.set('/nowhere', (_req, res) => void res.writeHead(302).end());
    routes.set('/ftp', redirect('ftp://127.0.0.1/file.png'));
    routes.set('/file-scheme', redirect('file:///etc/passwd'));
    routes.set('/credentials', redirect(`http://user:secret@${new URL(base).host}/file.png`));
    routes.set('/port-zero', redirect('http://127.0.0.1:0/file.png'));
    expect(await outcome('/hop1')).toMatchObject({ error: 'media_unavailable: more than 5 redirects' });
    expect(await outcome('/loop')).toMatchObject({ error: 'media_unavailable: redirect loop' });
    expect(await outcome('/nowhere')).toMatchObject({ error: 'media_unavailable: HTTP 302 without a Location' });
    expect(await outcome('/ftp')).toMatchObject({ error: 'media_unavailable: redirect to a URL that is not http(s)' });
    expect(await outcome('/file-scheme')).toMatchObject({ error: 'media_unavailable: redirect to a URL that is not http(s)' });
    expect(await outcome('/credentials')).toMatchObject({ error: 'media_unavailable: redirect to a URL with credentials' });
    expect(await outcome('/port-zero')).toMatchObject({ error: 'media_unavailable: redirect to port 0' });
  });

  it('refuses a redirect to a private address unless private networks are allowed', () => {
    // The first hop cannot be public here (127.0.0.1 only), so the per-hop check is asked directly: it is the same
    // one the fetch makes before every hop (a host name is refused at connection time by the guarded lookup).
    expect(() => checkHop('http://169.254.169.254/latest/meta-data', false)).toThrow('media_url_forbidden: private or reserved address');
    expect(() => checkHop('http://[::1]:8080/x', false)).toThrow('media_url_forbidden');
    expect(() => checkHop('http://169.254.169.254/latest/meta-data', true)).not.toThrow();
    expect(() => checkHop('https://cdn.example/file.png', false)).not.toThrow();
  });

  it('names a host refused at connection time (one resolving to a private address) media_url_forbidden', async () => {
    routes.set('/file.png', file);
    const media = fetcher({ allowPrivateNetworks: false });
    await expect(media.fetch(`http://localhost:${new URL(base).port}/file.png`, null, null)).rejects.toThrow(
      'media_url_forbidden: private or reserved address',
    );
    await media.close();
  });

  it('keeps the size cap on the file a redirect leads to', async () => {
    routes.set('/declared', (_req, res) => void res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000)));
    routes.set('/chunked', (_req, res) => void res.writeHead(200).end(Buffer.alloc(5000)));
    routes.set('/to-declared', redirect('/declared'));
    routes.set('/to-chunked', redirect('/chunked'));
    expect(await outcome('/to-declared', { maxBytes: 1000 })).toMatchObject({ error: 'media_too_large: 5000 bytes, the limit is 1000' });
    expect(await outcome('/to-chunked', { maxBytes: 1000 })).toMatchObject({ error: 'media_too_large: over 1000 bytes' });
  });

  it('keeps one time limit for all hops together', async () => {
    // Each hop answers well within the limit; the three together do not.
    const slowly =
      (route: Route): Route =>
      (req, res) =>
        void setTimeout(() => route(req, res), 400);
    routes.set('/a', slowly(redirect('/b')));
    routes.set('/b', slowly(redirect('/c')));
    routes.set('/c', slowly(file));
    const result = await outcome('/a', { timeoutMs: 1_000 });
    expect(result).toMatchObject({ error: 'media_timeout: no answer within 1000 ms' });
    expect(result.ms).toBeLessThan(1_300);
  });
});

describe('media fetch body errors', () => {
  it('reports a connection broken mid-body as media_unreachable, at once, not as a time-out', async () => {
    routes.set('/reset', (req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': '100000' });
      res.write(Buffer.alloc(1000, 1), () => req.socket.destroy());
    });
    const result = await outcome('/reset', { timeoutMs: 20_000 });
    expect(result.error).toMatch(/^media_unreachable: /);
    expect(result.ms).toBeLessThan(5_000);
  });

  it('still reports a body that stalls past the limit as media_timeout', async () => {
    routes.set('/stall', (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': '100000' });
      res.write(Buffer.alloc(1000, 1));
      stalled.push(res);
    });
    expect(await outcome('/stall', { timeoutMs: 500 })).toMatchObject({ error: 'media_timeout: body not received within 500 ms' });
  });
});

describe('media fetch failures worth another try', () => {
  it('tries again after a busy, rate-limited or failing host, a time-out or a broken connection, not after a final answer', async () => {
    for (const status of [408, 429, 500, 502, 503, 504]) routes.set(`/s${status}`, (_req, res) => void res.writeHead(status).end());
    for (const status of [400, 401, 403, 404, 410]) routes.set(`/s${status}`, (_req, res) => void res.writeHead(status).end());
    routes.set('/stall', (_req, res) => void stalled.push(res));
    routes.set('/big', (_req, res) => void res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000)));
    for (const status of [408, 429, 500, 502, 503, 504])
      expect(await outcome(`/s${status}`)).toMatchObject({ error: `media_unavailable: HTTP ${status}`, transient: true });
    for (const status of [400, 401, 403, 404, 410])
      expect(await outcome(`/s${status}`)).toMatchObject({ error: `media_unavailable: HTTP ${status}`, transient: false });
    expect(await outcome('/stall', { timeoutMs: 300 })).toMatchObject({ error: 'media_timeout: no answer within 300 ms', transient: true });
    expect(await outcome('/big', { maxBytes: 1000 })).toMatchObject({ error: 'media_too_large: 5000 bytes, the limit is 1000', transient: false });
    const refused = fetcher();
    await expect(refused.fetch('http://127.0.0.1:1/file.png', null, null)).rejects.toMatchObject({
      message: 'media_unreachable: ECONNREFUSED',
      transient: true,
    });
    await refused.close();
  });
});

describe('media fetch size cap', () => {
  it('fails a file whose declared size is over the cap, and the process lives on (the unread body is dropped quietly)', async () => {
    routes.set('/declared', (_req, res) => void res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000)));
    routes.set('/chunked', (_req, res) => void res.writeHead(200).end(Buffer.alloc(5000)));
    expect(await outcome('/declared', { maxBytes: 1000 })).toMatchObject({ error: 'media_too_large: 5000 bytes, the limit is 1000' });
    expect(await outcome('/chunked', { maxBytes: 1000 })).toMatchObject({ error: 'media_too_large: over 1000 bytes' });
    // The unheard 'error' an unread body emits when destroyed comes a turn later: it must not be thrown then.
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
});

describe('media fetch aborted by its caller', () => {
  // The dispatcher aborts the fetch of a send that can no longer go out (its instance reset, logged out or erased):
  // the fetch ends at once, not at the time-out, whether the host has not answered yet or stalls in the body.
  const cancelled = async (path: string) => {
    const media = fetcher({ timeoutMs: 20_000 });
    const cancel = new AbortController();
    const started = Date.now();
    setTimeout(() => cancel.abort(), 200);
    try {
      await media.fetch(`${base}${path}`, null, null, cancel.signal);
      return { error: null, ms: Date.now() - started };
    } catch (error) {
      return { error: (error as Error).message, transient: error instanceof MediaError && error.transient, ms: Date.now() - started };
    } finally {
      await media.close();
    }
  };

  it('ends a fetch whose host has not answered, or stalls in the body, as media_cancelled, at once and not retried', async () => {
    routes.set('/silent', (_req, res) => void stalled.push(res));
    routes.set('/stall', (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': '100000' });
      res.write(Buffer.alloc(1000, 1));
      stalled.push(res);
    });
    for (const path of ['/silent', '/stall']) {
      const result = await cancelled(path);
      expect({ path, error: result.error, transient: result.transient }).toEqual({
        path,
        error: 'media_cancelled: the send can no longer go out',
        transient: false,
      });
      expect(result.ms).toBeLessThan(1_000);
    }
  });

  it('ends at once a fetch whose caller had aborted already', async () => {
    routes.set('/file.png', file);
    const media = fetcher();
    await expect(media.fetch(`${base}/file.png`, null, null, AbortSignal.abort())).rejects.toThrow('media_cancelled');
    await media.close();
  });
});
