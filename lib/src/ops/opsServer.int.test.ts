import { startOpsServer, type OpsServer } from './opsServer';

// A service's ops server over HTTP on 127.0.0.1: its three routes, and what it answers besides them, in the error
// model every answer of the project has ({ error, code }; 405 with Allow), where Fastify's own 404 body had another.

describe('ops server (HTTP on 127.0.0.1)', () => {
  let server: OpsServer;
  beforeAll(async () => {
    server = await startOpsServer({ host: '127.0.0.1', port: 0, readiness: async () => ({ ready: false, reason: 'NATS is unreachable' }) });
  });
  afterAll(() => server.close());

  const call = async (method: string, path: string) => {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method });
    const text = await response.text();
    return { status: response.status, allow: response.headers.get('allow'), body: text ? (JSON.parse(text) as unknown) : null };
  };

  it('answers its routes: /healthz 200, /readyz 503 with the reason', async () => {
    expect(await call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call('GET', '/readyz')).toMatchObject({ status: 503, body: { status: 'not_ready', reason: 'NATS is unreachable' } });
  });

  it.each([
    ['POST', '/metrics'],
    ['OPTIONS', '/healthz'],
    ['DELETE', '/readyz?x=1'],
  ])('answers %s %s with 405, Allow: GET, HEAD and the JSON error body', async (method, path) => {
    const bare = path.split('?')[0]!;
    expect(await call(method, path)).toEqual({
      status: 405,
      allow: 'GET, HEAD',
      body: { error: `Method ${method} is not allowed on ${bare}; use GET, HEAD`, code: 'method_not_allowed' },
    });
  });

  it('answers an unknown path with 404 route_not_found', async () => {
    expect(await call('GET', '/v1/status')).toEqual({ status: 404, allow: null, body: { error: 'Route GET /v1/status not found', code: 'route_not_found' } });
  });
});
