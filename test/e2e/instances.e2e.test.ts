import { createSigner } from 'fast-jwt';
import { issueToken } from '@wagw/lib';
import { startStack, TEST_JWT_SECRET, type TestStack } from '../harness/stack';

describe('instances over HTTP', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const create = async (account = 'acme'): Promise<string> => {
    const { status, body } = await stack.call('/v1/create_instance', { account });
    expect(status).toBe(200);
    return body.instance_id as string;
  };

  it('creates an instance and answers the seed envelope with its id', async () => {
    const { status, body } = await stack.call('/v1/create_instance');
    expect(status).toBe(200);
    expect(body).toEqual({ status: 200, message: 'Instance created', instance_id: expect.stringMatching(/^[0-9A-F]{20}$/) });
  });

  it('shows a new instance as created, with no webhook and no linked number', async () => {
    const id = await create();
    const { status, body } = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 200,
      instance_id: id,
      state: 'created',
      webhook: null,
      linked_number: null,
      last_disconnect_reason: null,
      restricted: null,
    });
    expect(Date.parse(body.created_at as string)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('sets the webhook, returns a whsec_ signing secret that stays the same, and shows the settings in status', async () => {
    const id = await create();
    const url = 'https://hooks.example.com/wa?x=1&y=2';
    const first = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(url)}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 200, success: true, signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    const second = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=false&webhook_url=${encodeURIComponent(url)}`);
    expect(second.body.signing_secret).toBe(first.body.signing_secret);
    const status = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status.body.webhook).toMatchObject({ url, enabled: false });
  });

  it('resets an instance: success, state created, and the reset is in its history', async () => {
    const id = await create();
    const reset = await stack.call(`/v1/reset_instance?instance_id=${id}`);
    expect(reset).toEqual({ status: 200, body: { status: 200, message: 'Instance reset', success: true } });
    const status = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status.body.state).toBe('created');
    const history = await stack.call(`/v1/history?instance_id=${id}`);
    expect((history.body.events as Array<{ type: string }>).map((e) => e.type)).toEqual(['InstanceCreated', 'InstanceReset']);
  });

  it('keeps the full audit trail, oldest first, paged with a cursor, and never a secret in it', async () => {
    const id = await create();
    for (let i = 0; i < 4; i++) {
      const r = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(`https://h.example/${i}`)}`);
      expect(r.status).toBe(200);
    }
    const page1 = await stack.call(`/v1/history?instance_id=${id}&limit=3`);
    expect(page1.status).toBe(200);
    const events1 = page1.body.events as Array<Record<string, unknown>>;
    expect(events1.map((e) => e.type)).toEqual(['InstanceCreated', 'WebhookConfigured', 'WebhookConfigured']);
    expect(events1[0]).toMatchObject({ stream: `${id}.instance`, schema_version: 1, data: { instance_id: id, account: 'acme' } });
    expect(page1.body.next_cursor).toEqual(expect.any(Number));
    const page2 = await stack.call(`/v1/history?instance_id=${id}&limit=3&cursor=${page1.body.next_cursor as number}`);
    expect((page2.body.events as Array<{ data: { url: string } }>).map((e) => e.data.url)).toEqual(['https://h.example/2', 'https://h.example/3']);
    expect(page2.body.next_cursor).toBeNull();
    expect(JSON.stringify([page1.body, page2.body])).not.toContain('whsec_');
  });

  it('answers the status at a past moment, folded from the history: earlier webhook settings, 404 before creation, 400 for a bad time', async () => {
    const before = new Date(Date.now() - 1_000).toISOString();
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const urlA = 'https://a.example/hook';
    const urlB = 'https://b.example/hook';
    expect((await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(urlA)}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await stack.call(`/v1/set_webhook?instance_id=${id}&enable=false&webhook_url=${encodeURIComponent(urlB)}`)).status).toBe(200);

    const then = await stack.call(`/v1/status?instance_id=${id}&at=${encodeURIComponent(between)}`);
    expect(then.status).toBe(200);
    expect(then.body).toMatchObject({ instance_id: id, state: 'created', webhook: { url: urlA, enabled: true } });
    expect((await stack.call(`/v1/status?instance_id=${id}`)).body).toMatchObject({ webhook: { url: urlB, enabled: false } });
    // The same moment given with an offset instead of Z.
    const offset = new Date(Date.parse(between)).toISOString().replace('Z', '+00:00');
    expect((await stack.call(`/v1/status?instance_id=${id}&at=${encodeURIComponent(offset)}`)).body).toMatchObject({ webhook: { url: urlA } });

    const early = await stack.call(`/v1/status?instance_id=${id}&at=${encodeURIComponent(before)}`);
    expect([early.status, early.body.code]).toEqual([404, 'instance_not_found']);
    for (const bad of ['yesterday', '2026-11-23', '2026-11-23T10:00:00', '2026-13-45T99:00:00Z', '2026-11-31T10:00:00Z', '2026-02-30T10:00:00Z']) {
      const r = await stack.call(`/v1/status?instance_id=${id}&at=${encodeURIComponent(bad)}`);
      expect([bad, r.status, r.body.code]).toEqual([bad, 400, 'invalid_time']);
    }
    // A moment still to come is not known yet: a 400, not today's state; a clock a second ahead of the server's is not refused.
    const future = await stack.call(`/v1/status?instance_id=${id}&at=${new Date(Date.now() + 60_000).toISOString()}`);
    expect([future.status, future.body.code, future.body.error]).toEqual([400, 'invalid_time', expect.stringContaining('future')]);
    const skewed = await stack.call(`/v1/status?instance_id=${id}&at=${new Date(Date.now() + 1_000).toISOString()}`);
    expect([skewed.status, skewed.body.webhook]).toEqual([200, expect.objectContaining({ url: urlB, enabled: false })]);
  });

  it('filters the history by event types, time and message, paging with the same filters', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    for (let i = 0; i < 5; i++) {
      expect((await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(`https://h${i}.example/`)}`)).status).toBe(200);
    }
    const middle = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    const history = (query: string) => stack.call(`/v1/history?instance_id=${id}&${query}`);
    const typesOf = (body: Record<string, unknown>): string[] => (body.events as Array<{ type: string }>).map((e) => e.type);

    const hooks1 = await history('types=WebhookConfigured&limit=3');
    expect(typesOf(hooks1.body)).toEqual(['WebhookConfigured', 'WebhookConfigured', 'WebhookConfigured']);
    const hooks2 = await history(`types=WebhookConfigured&limit=3&cursor=${hooks1.body.next_cursor as number}`);
    expect(typesOf(hooks2.body)).toEqual(['WebhookConfigured', 'WebhookConfigured']);
    expect(hooks2.body.next_cursor).toBeNull();
    expect(typesOf((await history('types=InstanceCreated,InstanceReset')).body)).toEqual(['InstanceCreated', 'InstanceReset']);
    expect(typesOf((await history(`since=${encodeURIComponent(middle)}`)).body)).toEqual(['InstanceReset']);
    expect(typesOf((await history(`until=${encodeURIComponent(middle)}`)).body)).toEqual(['InstanceCreated', ...Array(5).fill('WebhookConfigured')]);
    // An instance without messages: a message filter (a well-formed id of no message here) finds nothing, and says it is the end.
    expect((await history('message_id=m_0123456789abcdef01234567')).body).toMatchObject({ events: [], next_cursor: null });
  });

  it("lists the account's own instances only", async () => {
    const mine = await create('lister');
    const theirs = await create('someone-else');
    const { body } = await stack.call('/v1/list_instances', { account: 'lister' });
    const ids = (body.instances as Array<{ instance_id: string }>).map((i) => i.instance_id);
    expect(ids).toEqual([mine]);
    expect(ids).not.toContain(theirs);
  });

  it('answers the same instance for a repeated Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'create-once-123' };
    const a = await stack.call('/v1/create_instance', { headers });
    const b = await stack.call('/v1/create_instance', { headers });
    expect(b.body.instance_id).toBe(a.body.instance_id);
    const history = await stack.call(`/v1/history?instance_id=${a.body.instance_id as string}`);
    expect(history.body.events).toHaveLength(1);
  });

  it("holds an Idempotency-Key to its account, instance and operation: another account's or operation's same key is a command of its own", async () => {
    const headers = { 'idempotency-key': 'order-4711' };
    const mine = await stack.call('/v1/create_instance', { headers, account: 'idem-a' });
    const theirs = await stack.call('/v1/create_instance', { headers, account: 'idem-b' });
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.body.instance_id).not.toBe(mine.body.instance_id);
    const id = mine.body.instance_id as string;
    const reset = await stack.call(`/v1/reset_instance?instance_id=${id}`, { headers, account: 'idem-a' });
    expect(reset.status).toBe(200);
    const again = await stack.call(`/v1/reset_instance?instance_id=${id}`, { headers, account: 'idem-a' });
    expect(again.status).toBe(200);
    const history = await stack.call(`/v1/history?instance_id=${id}`, { account: 'idem-a' });
    // Created, then reset once: the repeated reset is the same command.
    expect((history.body.events as Array<{ type: string }>).map((e) => e.type)).toEqual(['InstanceCreated', 'InstanceReset']);
  });

  describe('credentials', () => {
    it('accepts the token as access_token in the query', async () => {
      const { status } = await stack.call(`/v1/create_instance?access_token=${stack.token()}`, { token: null });
      expect(status).toBe(200);
    });
    it('answers 401 invalid_token, not "missing", for access_token given twice', async () => {
      const { status, body } = await stack.call(`/v1/create_instance?access_token=${stack.token()}&access_token=x`, { token: null });
      expect([status, body.code]).toEqual([401, 'invalid_token']);
      expect(body.error).toMatch(/access_token more than once/);
    });
    it('answers 401 without a credential', async () => {
      const { status, body } = await stack.call('/v1/create_instance', { token: null });
      expect(status).toBe(401);
      expect(body).toEqual({ error: expect.stringContaining('Missing credential'), code: 'missing_token' });
    });
    it('answers 401 for a malformed token', async () => {
      const { status, body } = await stack.call('/v1/create_instance', { token: 'not-a-jwt' });
      expect([status, body.code]).toEqual([401, 'invalid_token']);
    });
    it('answers 401 for a token signed with another secret', async () => {
      const forged = issueToken('another-secret-that-is-long-enough-0123456789', 'acme', 3600);
      const { status, body } = await stack.call('/v1/create_instance', { token: forged });
      expect([status, body.code]).toEqual([401, 'invalid_token']);
    });
    it('answers 401 for an expired token', async () => {
      const expired = createSigner({ key: TEST_JWT_SECRET, expiresIn: 1000, clockTimestamp: Date.now() - 60_000 })({ sub: 'acme' });
      const { status, body } = await stack.call('/v1/create_instance', { token: expired });
      expect([status, body.code]).toEqual([401, 'token_expired']);
    });
    it('answers 401 invalid_token for a malformed Authorization header', async () => {
      const { status, body } = await stack.call('/v1/create_instance', { token: null, headers: { authorization: 'Basic abc' } });
      expect([status, body.code]).toEqual([401, 'invalid_token']);
    });
  });

  describe('ownership', () => {
    it("answers 404 for another account's instance, exactly as for an unknown one", async () => {
      const id = await create('owner');
      const unknown = 'ABCDEF0123456789ABCD';
      for (const path of ['/v1/status?instance_id=', '/v1/reset_instance?instance_id=', '/v1/history?instance_id=']) {
        const foreign = await stack.call(`${path}${id}`, { account: 'intruder' });
        const missing = await stack.call(`${path}${unknown}`, { account: 'intruder' });
        expect(foreign).toEqual({ status: 404, body: { error: 'Instance not found', code: 'instance_not_found' } });
        expect(missing).toEqual(foreign);
      }
      const hook = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=https%3A%2F%2Fh.example`, { account: 'intruder' });
      expect(hook.status).toBe(404);
      const status = await stack.call(`/v1/status?instance_id=${id}`, { account: 'owner' });
      expect(status.body.webhook).toBeNull();
    });
  });

  describe('bad input', () => {
    it('answers 400 for a malformed instance_id', async () => {
      for (const bad of ['abc', 'abcdef0123456789abcd', '../etc', '']) {
        const { status, body } = await stack.call(`/v1/status?instance_id=${encodeURIComponent(bad)}`);
        expect([bad, status, body.code]).toEqual([bad, 400, 'invalid_request']);
      }
      const missing = await stack.call('/v1/reset_instance');
      expect(missing.status).toBe(400);
    });

    it('answers 400 for a missing, relative, non-http(s) or over-long webhook_url', async () => {
      const id = await create();
      const cases = [
        '',
        'webhook_url=',
        `webhook_url=${encodeURIComponent('/relative/path')}`,
        `webhook_url=${encodeURIComponent('ftp://files.example/x')}`,
        `webhook_url=${encodeURIComponent('javascript:alert(1)')}`,
        `webhook_url=${encodeURIComponent(`https://h.example/${'a'.repeat(2048)}`)}`,
      ];
      for (const query of cases) {
        const { status, body } = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&${query}`);
        expect([query.slice(0, 40), status]).toEqual([query.slice(0, 40), 400]);
        expect(body.error).toEqual(expect.any(String));
      }
    });

    it('answers 400 when enable is not exactly true or false', async () => {
      const id = await create();
      for (const enable of ['yes', 'TRUE', '1', '']) {
        const { status } = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=${enable}&webhook_url=https%3A%2F%2Fh.example`);
        expect([enable, status]).toEqual([enable, 400]);
      }
      const missing = await stack.call(`/v1/set_webhook?instance_id=${id}&webhook_url=https%3A%2F%2Fh.example`);
      expect(missing.status).toBe(400);
    });

    it('answers 400 for a bad history cursor or limit', async () => {
      const id = await create();
      for (const q of ['cursor=-1', 'cursor=abc', 'limit=0', 'limit=5000']) {
        expect((await stack.call(`/v1/history?instance_id=${id}&${q}`)).status).toBe(400);
      }
    });

    it('answers 400 for bad history filters, and for a cursor of another instance or past the end', async () => {
      const id = await create();
      const other = await create();
      const bad = async (query: string): Promise<unknown> => {
        const r = await stack.call(`/v1/history?instance_id=${id}&${query}`);
        return [query, r.status, r.body.code];
      };
      expect(await bad('types=InstanceCreated,Bogus')).toEqual(['types=InstanceCreated,Bogus', 400, 'invalid_types']);
      expect(await bad('since=yesterday')).toEqual(['since=yesterday', 400, 'invalid_time']);
      expect(await bad('until=2026-11-23')).toEqual(['until=2026-11-23', 400, 'invalid_time']);
      expect(await bad('since=2026-11-23T10:00:00Z&until=2026-11-23T09:00:00Z')).toEqual([
        'since=2026-11-23T10:00:00Z&until=2026-11-23T09:00:00Z',
        400,
        'invalid_time_range',
      ]);
      // Only the forms of message ids (m_… or in_…), as the OpenAPI document says: zzz was a message of no events.
      for (const id of ['a.b', 'zzz', 'm_123', 'in_XYZ']) expect(await bad(`message_id=${id}`)).toEqual([`message_id=${id}`, 400, 'invalid_message_id']);
      const theirs = (await stack.call(`/v1/history?instance_id=${other}`)).body.events as Array<{ sequence: number }>;
      expect(await bad(`cursor=${theirs[0]!.sequence}`)).toEqual([`cursor=${theirs[0]!.sequence}`, 400, 'invalid_cursor']);
      expect(await bad('cursor=999999999')).toEqual(['cursor=999999999', 400, 'invalid_cursor']);
    });

    it('answers 413 for an oversized request body and 414 for an oversized URL', async () => {
      const big = await stack.call('/v1/create_instance', { method: 'POST', body: 'x'.repeat(100 * 1024), headers: { 'content-type': 'text/plain' } });
      expect(big).toEqual({ status: 413, body: { error: expect.stringContaining('larger than'), code: 'request_too_large' } });
      const longUrl = await stack.call(`/v1/status?instance_id=${'A'.repeat(9000)}`);
      expect([longUrl.status, longUrl.body.code]).toEqual([414, 'url_too_long']);
    });

    it('answers 404 with a JSON error for an unknown route', async () => {
      const { status, body } = await stack.call('/v1/nope');
      expect(status).toBe(404);
      expect(body.code).toBe('route_not_found');
    });
  });

  describe('documentation and operations', () => {
    it('serves an OpenAPI document generated from the routes, and a docs page', async () => {
      const doc = await fetch(`${stack.baseUrl}/v1/openapi.json`).then((r) => r.json() as Promise<{ openapi: string; paths: Record<string, unknown> }>);
      expect(doc.openapi).toBe('3.0.3');
      const send = (doc.paths['/send'] as { post: { requestBody: { content: Record<string, { schema: { required: string[] } }> } } }).post;
      expect(send.requestBody.content['application/json']!.schema.required).toEqual(expect.arrayContaining(['number', 'type', 'instance_id']));
      expect(Object.keys(doc.paths).sort()).toEqual(
        [
          '/check_number',
          '/create_instance',
          '/erase_instance_data',
          '/get_paircode',
          '/events',
          '/get_qrcode',
          '/history',
          '/history/export',
          '/list_groups',
          '/list_instances',
          '/mark_read',
          '/media',
          '/reconnect',
          '/redeliver_webhooks',
          '/replay_webhooks',
          '/reset_instance',
          '/revoke_token',
          '/sandbox/inbound',
          '/sandbox/restrict',
          '/sandbox/scan',
          '/send',
          '/send_group',
          '/set_webhook',
          '/status',
          '/webhook_deliveries',
        ].sort(),
      );
      const page = await fetch(`${stack.baseUrl}/v1/docs/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('swagger');
    });

    it('exposes health, readiness and Prometheus metrics on the gateway and the instances service', async () => {
      for (const base of [stack.baseUrl, `http://127.0.0.1:${stack.instances.opsPort}`]) {
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        expect((await fetch(`${base}/readyz`)).status).toBe(200);
        const metrics = await fetch(`${base}/metrics`).then((r) => r.text());
        expect(metrics).toContain('process_cpu_user_seconds_total');
        // Load balancers that probe with HEAD get the same status, without a body.
        for (const path of ['/healthz', '/readyz']) {
          const head = await fetch(`${base}${path}`, { method: 'HEAD' });
          expect([path, head.status, await head.text()]).toEqual([path, 200, '']);
        }
      }
      const gatewayMetrics = await fetch(`${stack.baseUrl}/metrics`).then((r) => r.text());
      expect(gatewayMetrics).toContain('http_request_duration_seconds_bucket');
    });
  });
});
