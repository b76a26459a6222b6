import { createServer, type Server, type ServerResponse } from 'node:http';
import { createDeliveryClient, type DeliveryClient } from './deliveryClient';

describe('delivery client', () => {
  let server: Server;
  let base: string;
  const hanging: ServerResponse[] = [];
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/ok': (res) => res.writeHead(200).end('ok'),
    '/no-content': (res) => res.writeHead(204).end(),
    '/redirect': (res) => res.writeHead(302, { location: '/ok' }).end(),
    '/gone': (res) => res.writeHead(410).end(),
    '/throttled': (res) => res.writeHead(429, { 'retry-after': '7' }).end(),
    '/error': (res) => res.writeHead(500).end('x'.repeat(100_000)),
    '/hang': (res) => hanging.push(res),
    '/endless-body': (res) => {
      res.writeHead(200).write('partial');
      hanging.push(res);
    },
  };
  let client: DeliveryClient;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      req.resume();
      req.on('end', () => routes[req.url ?? '']?.(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    client = createDeliveryClient({ timeoutMs: 300, allowPrivateNetworks: true });
  });
  afterAll(async () => {
    hanging.forEach((res) => res.destroy());
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string) => client.deliver(`${base}${path}`, '{"a":1}', { 'webhook-id': 'evt_1_0' });

  it('counts 2xx as delivered', async () => {
    expect(await post('/ok')).toMatchObject({ kind: 'delivered', status: 200 });
    expect(await post('/no-content')).toMatchObject({ kind: 'delivered', status: 204 });
  });
  it('does not follow redirects: a 3xx is retried', async () => {
    expect(await post('/redirect')).toMatchObject({ kind: 'retry', status: 302, error: 'redirects are not followed' });
    expect(seen.filter((p) => p === '/ok')).toHaveLength(1);
  });
  it('reports 410 as gone', async () => expect(await post('/gone')).toMatchObject({ kind: 'gone', status: 410 }));
  it('reads Retry-After on 429', async () => expect(await post('/throttled')).toMatchObject({ kind: 'retry', status: 429, retryAfterMs: 7_000 }));
  it('retries 5xx without reading a large body whole', async () => expect(await post('/error')).toMatchObject({ kind: 'retry', status: 500 }));
  it('gives up on an endpoint that never answers within the time limit', async () => {
    const outcome = await post('/hang');
    expect(outcome).toMatchObject({ kind: 'retry', error: expect.stringContaining('300 ms') });
    expect(outcome.durationMs).toBeLessThan(2_000);
  });
  it('counts a 2xx whose body never ends within the time limit as a failed attempt', async () => {
    expect(await post('/endless-body')).toMatchObject({ kind: 'retry', error: expect.stringContaining('300 ms') });
  });
  it('keeps connections alive instead of opening one per delivery', async () => {
    let opened = 0;
    const count = (): void => void opened++;
    server.on('connection', count);
    try {
      for (let i = 0; i < 20; i++) expect(await post('/ok')).toMatchObject({ kind: 'delivered' });
    } finally {
      server.off('connection', count);
    }
    // The next request may start before the previous connection is back in the pool: then a second one opens.
    expect(opened).toBeLessThanOrEqual(2);
  });
  it('does not queue a delivery behind requests hanging on the same origin (more than any pool size it had)', async () => {
    // The time-out is long here: a delivery queued behind the hanging ones would wait for it, not fail at once.
    const patient = createDeliveryClient({ timeoutMs: 10_000, allowPrivateNetworks: true });
    const open = hanging.length;
    try {
      const stuck = Array.from({ length: 80 }, () => patient.deliver(`${base}/hang`, '{}', {}));
      const quick = await patient.deliver(`${base}/ok`, '{}', {});
      expect(quick).toMatchObject({ kind: 'delivered', status: 200 });
      expect(quick.durationMs).toBeLessThan(2_000);
      // Every hanging one has a connection of its own (none waits for another's to end).
      for (let waited = 0; hanging.length - open < 80 && waited < 2_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      expect(hanging.length - open).toBe(80);
      hanging.splice(open).forEach((res) => res.destroy());
      await Promise.all(stuck);
    } finally {
      await patient.close();
    }
  });
  it('retries when the connection is refused', async () => {
    const refused = await client.deliver('http://127.0.0.1:1/', '{}', {});
    expect(refused).toMatchObject({ kind: 'retry', error: expect.stringContaining('ECONNREFUSED') });
  });
  it('refuses private addresses before connecting unless they are allowed', async () => {
    const guarded = createDeliveryClient({ timeoutMs: 300 });
    const before = seen.length;
    try {
      expect(await guarded.deliver(`${base}/ok`, '{}', {})).toMatchObject({ kind: 'retry', error: expect.stringContaining('not allowed') });
      expect(await guarded.deliver(`http://localhost:${new URL(base).port}/ok`, '{}', {})).toMatchObject({
        kind: 'retry',
        error: expect.stringContaining('EFORBIDDEN'),
      });
    } finally {
      await guarded.close();
    }
    expect(seen.length).toBe(before);
  });
});
