import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../test/harness/gatewayWithFakes';

// README "Errors": a known path called with another method answers 405 with `Allow`, an unknown one 404. The
// console's page and files are known paths like `/healthz` or `/v1/docs`; a path under /console/ that names no file
// is not. What acts on nothing (files, the OpenAPI document, health, readiness, metrics) answers HEAD as well. (Needs the console built: `npm run build`.)
describe('the console: methods on its paths', () => {
  let gateway: FastifyInstance;
  beforeAll(async () => {
    gateway = await gatewayWithFakes({ secret: 's'.repeat(40) });
  });
  afterAll(() => gateway.close());

  it.each([
    ['POST', '/console/'],
    ['DELETE', '/console/main.js'],
    ['PUT', '/console/console.css'],
    ['PATCH', '/console/index.html'],
    ['DELETE', '/console/sections/send.js'],
  ])('answers %s %s 405 method_not_allowed with Allow: GET, HEAD', async (method, url) => {
    const response = await gateway.inject({ method: method as 'POST', url });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.json()).toEqual({ error: `Method ${method} is not allowed on ${url}; use GET, HEAD`, code: 'method_not_allowed' });
  });

  it.each([
    ['DELETE', '/v1/docs/static/swagger-ui.css'],
    ['PUT', '/v1/docs/static/nested/file.js'],
    ['POST', '/v1/docs/static/index.html'],
  ])('answers %s %s (the API docs page and its files, served under a wildcard) 405 with Allow: GET, HEAD', async (method, url) => {
    const response = await gateway.inject({ method: method as 'POST', url });
    expect([response.statusCode, response.headers.allow, response.json<{ code: string }>().code]).toEqual([405, 'GET, HEAD', 'method_not_allowed']);
  });

  it.each([
    ['GET', '/console/'],
    ['HEAD', '/console/'],
    ['GET', '/console/main.js'],
    ['HEAD', '/console/console.css'],
  ])('still serves %s %s', async (method, url) => {
    const response = await gateway.inject({ method: method as 'GET', url });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it.each([
    ['GET', '/'],
    ['HEAD', '/'],
    ['GET', '/console'],
    ['HEAD', '/console'],
  ])('redirects %s %s to the console page', async (method, url) => {
    const response = await gateway.inject({ method: method as 'GET', url });
    expect([response.statusCode, response.headers.location]).toEqual([302, '/console/']);
    const post = await gateway.inject({ method: 'POST', url });
    expect([post.statusCode, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it.each(['/healthz', '/readyz', '/metrics', '/v1/openapi.json'])('answers HEAD %s as its GET, without the body, and names both in Allow', async (url) => {
    const [get, head] = [await gateway.inject({ method: 'GET', url }), await gateway.inject({ method: 'HEAD', url })];
    expect([head.statusCode, head.headers['content-type'], head.body]).toEqual([get.statusCode, get.headers['content-type'], '']);
    expect(get.statusCode).toBe(200);
    const post = await gateway.inject({ method: 'POST', url });
    expect([post.statusCode, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it.each(['/v1/docs', '/v1/docs/', '/v1/docs/json', '/v1/docs/yaml', '/v1/docs/static/index.html', '/v1/docs/static/swagger-initializer.js'])(
    'answers HEAD %s (the API docs page) as its GET, without the body, and names both in Allow',
    async (url) => {
      const [get, head] = [await gateway.inject({ method: 'GET', url }), await gateway.inject({ method: 'HEAD', url })];
      expect([head.statusCode, head.headers['content-type'], head.headers.location, head.body]).toEqual([
        get.statusCode,
        get.headers['content-type'],
        get.headers.location,
        '',
      ]);
      expect(get.statusCode).toBe(url.endsWith('index.html') ? 302 : 200);
      const post = await gateway.inject({ method: 'POST', url });
      expect([post.statusCode, post.headers.allow]).toEqual([405, 'GET, HEAD']);
    },
  );

  it.each([
    ['GET', '/v1/docs/static/nonexistent'],
    ['HEAD', '/v1/docs/static/nested/file.js'],
  ])('answers %s %s, a file the docs page does not have, 404 route_not_found (its methods are right: not a 405)', async (method, url) => {
    const response = await gateway.inject({ method: method as 'GET', url });
    expect([response.statusCode, response.headers.allow]).toEqual([404, undefined]);
    if (method === 'GET') expect(response.json()).toMatchObject({ code: 'route_not_found' });
  });

  it('answers a wrong method on a path written with percent-encoded letters as on the path itself (the router decodes them)', async () => {
    const [plain, encoded] = [await gateway.inject({ method: 'DELETE', url: '/v1/status' }), await gateway.inject({ method: 'DELETE', url: '/v1/st%61tus' })];
    expect(plain.statusCode).toBe(405);
    expect([encoded.statusCode, encoded.headers.allow]).toEqual([405, plain.headers.allow]);
  });

  it.each([
    ['GET', '/console/app.js'],
    ['POST', '/console/app.js'],
    ['DELETE', '/console/nothing/here.css'],
  ])('answers %s %s, which names no file, 404 route_not_found', async (method, url) => {
    const response = await gateway.inject({ method: method as 'GET', url });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'route_not_found' });
  });
});
