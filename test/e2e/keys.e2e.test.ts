import { connectNats, instanceStream, issueToken, JetStreamEventStore } from '@wagw/lib';
import { startGateway, type RunningGateway } from '../../services/gateway/src/service';
import { startStack, TEST_JWT_SECRET, type TestStack } from '../harness/stack';
import { testLogger } from '../harness/logger';
import { sleep } from '../harness/wait';

const tokenIdOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string }).jti;

// Instance tokens and revocation, with two gateway replicas on one NATS.
describe('keys: instance tokens with scopes, revocation on every replica', () => {
  let stack: TestStack;
  let second: RunningGateway;
  let a: string;
  let b: string;
  beforeAll(async () => {
    stack = await startStack();
    second = await startGateway({ ...stack.gatewayConfig, replicaId: 'test-gateway-keys-2' }, testLogger('gateway-2'));
    a = (await stack.client().GET('/create_instance')).data!.instance_id;
    b = (await stack.client().GET('/create_instance')).data!.instance_id;
  });
  afterAll(async () => {
    await second.close();
    await stack.close();
  });

  it('holds an instance token to its instance (another one answers 404) and its scopes (403 insufficient_scope)', async () => {
    const reader = stack.client({ token: stack.token('acme', { instanceId: a, scopes: ['read'] }) });
    expect((await reader.GET('/status', { params: { query: { instance_id: a } } })).data?.instance_id).toBe(a);
    const other = await reader.GET('/status', { params: { query: { instance_id: b } } });
    expect([other.response.status, other.error?.code]).toEqual([404, 'instance_not_found']);
    const manage = await reader.GET('/reset_instance', { params: { query: { instance_id: a } } });
    expect([manage.response.status, manage.error?.code]).toEqual([403, 'insufficient_scope']);
    const send = await reader.POST('/send', { body: { instance_id: a, number: '4917612345678', type: 'text', message: 'hi' } });
    expect([send.response.status, send.error]).toEqual([403, { error: expect.stringContaining('send scope'), code: 'insufficient_scope' }]);
  });

  it('holds a POST to the instance its body names too: a token for A cannot act on B by naming A in the query', async () => {
    const sender = stack.token('acme', { instanceId: a, scopes: ['send', 'manage'] });
    const post = (path: string, body: Record<string, unknown>) =>
      fetch(`${stack.baseUrl}/v1${path}?instance_id=${a}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sender}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const send = await post('/send', { instance_id: b, number: '4917612345678', type: 'text', message: 'not yours' });
    expect([send.status, ((await send.json()) as { code: string }).code]).toEqual([404, 'instance_not_found']);
    const erase = await post('/erase_instance_data', { instance_id: b });
    expect([erase.status, ((await erase.json()) as { code: string }).code]).toEqual([404, 'instance_not_found']);
    const history = await stack.client().GET('/history', { params: { query: { instance_id: b } } });
    expect(history.data!.events.map((e) => e.type)).toEqual(['InstanceCreated']);
  });

  it("streams an instance token only its instance's live events, though it names none", async () => {
    const reader = stack.token('acme', { instanceId: a, scopes: ['read'] });
    const gone = new AbortController();
    const response = await fetch(`${stack.baseUrl}/v1/events`, { headers: { authorization: `Bearer ${reader}` }, signal: gone.signal });
    expect(response.status).toBe(200);
    const body = response.body!.getReader();
    // B first, then A: when A's event arrives, B's would have arrived before it.
    await stack.client().GET('/reset_instance', { params: { query: { instance_id: b } } });
    await stack.client().GET('/reset_instance', { params: { query: { instance_id: a } } });
    let text = '';
    let pending = body.read();
    for (let i = 0; i < 50 && !text.includes(`"instance_id":"${a}"`); i++) {
      const chunk = await Promise.race([pending, sleep(100).then(() => null)]);
      if (!chunk) continue;
      if (chunk.done) break;
      text += Buffer.from(chunk.value as Uint8Array).toString('utf8');
      pending = body.read();
    }
    pending.catch(() => undefined); // the read in flight fails with the abort
    gone.abort();
    expect(text).toContain(`"instance_id":"${a}"`);
    expect(text).not.toContain(`"instance_id":"${b}"`);
  });

  it('refuses account routes to an instance token with 403 account_token_required', async () => {
    const manager = stack.client({ token: stack.token('acme', { instanceId: a, scopes: ['send', 'read', 'manage'] }) });
    for (const path of ['/create_instance', '/list_instances'] as const) {
      const r = await manager.GET(path);
      expect([path, r.response.status, r.error?.code]).toEqual([path, 403, 'account_token_required']);
    }
    expect((await manager.GET('/reset_instance', { params: { query: { instance_id: a } } })).response.status).toBe(200);
  });

  it('revokes a token on one replica; the other refuses it with 401 token_revoked within 1 s', async () => {
    const token = stack.token('acme', { instanceId: a, scopes: ['read'] });
    const onSecond = () => fetch(`http://127.0.0.1:${second.port}/v1/status?instance_id=${a}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await onSecond()).status).toBe(200);
    const revoked = await stack.client().GET('/revoke_token', { params: { query: { token_id: tokenIdOf(token) } } });
    expect(revoked.data).toEqual({ status: 200, message: 'Token id revoked: a token of this account with this id is refused from now on', success: true });
    const started = Date.now();
    let response = await onSecond();
    for (let i = 0; i < 100 && response.status === 200; i++) {
      await sleep(10);
      response = await onSecond();
    }
    const ms = Date.now() - started;
    process.stdout.write(`revocation seen by the other replica after ${ms} ms\n`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'The token has been revoked', code: 'token_revoked' });
    expect(ms).toBeLessThan(1_000);
  });

  it('ends an open live events stream once its token is revoked or expires, saying which', async () => {
    /** The stream's text until it ends (or `ms` pass). */
    const streamUntilEnd = async (token: string, whileOpen: () => Promise<void>, ms: number): Promise<{ text: string; ended: boolean }> => {
      const response = await fetch(`${stack.baseUrl}/v1/events?instance_id=${a}`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const body = response.body!.getReader();
      await whileOpen();
      let text = '';
      const deadline = Date.now() + ms;
      // One read in flight at a time, kept across the waits: a read the wait won against still brings its chunk.
      let pending = body.read();
      while (Date.now() < deadline) {
        const chunk = await Promise.race([pending, sleep(100).then(() => null)]);
        if (!chunk) continue;
        if (chunk.done) return { text, ended: true };
        text += Buffer.from(chunk.value as Uint8Array).toString('utf8');
        pending = body.read();
      }
      await body.cancel();
      return { text, ended: false };
    };
    const revokedToken = stack.token('acme', { instanceId: a, scopes: ['read'] });
    const revoked = await streamUntilEnd(
      revokedToken,
      async () => void (await stack.client().GET('/revoke_token', { params: { query: { token_id: tokenIdOf(revokedToken) } } })),
      3_000,
    );
    expect(revoked).toEqual({ text: expect.stringContaining('"code":"token_revoked"'), ended: true });
    const shortLived = issueToken(TEST_JWT_SECRET, 'acme', 2, { instanceId: a, scopes: ['read'] });
    const expired = await streamUntilEnd(shortLived, async () => undefined, 4_500);
    expect(expired).toEqual({ text: expect.stringContaining('"code":"token_expired"'), ended: true });
  });

  it('ends a running history export once its token is revoked, with where to resume, instead of streaming on', async () => {
    // A history of ~18 MB (more than the sockets between here and the gateway hold), appended straight to the log.
    const id = (await stack.client().GET('/create_instance')).data!.instance_id;
    const nats = await connectNats({ url: stack.nats.url, name: 'keys-export', logger: testLogger('keys-export') });
    const store = await JetStreamEventStore.open(nats, { logger: testLogger('keys-export') });
    const url = `https://hooks.example/${'x'.repeat(2_000)}`;
    let version = (await store.readStream(instanceStream(id))).at(-1)?.sequence ?? 0;
    for (let c = 0; c < 50; c++) {
      const events = Array.from({ length: 180 }, (_, i) => ({
        type: 'WebhookConfigured',
        schemaVersion: 1,
        occurredAt: new Date().toISOString(),
        data: { url, enabled: i % 2 === 0 },
      }));
      version = (await store.append(instanceStream(id), events, { expectedVersion: version, commandId: `export-${id}-${c}` })).version;
    }
    await nats.close();
    const token = stack.token('acme', { instanceId: id, scopes: ['read'] });
    const response = await fetch(`${stack.baseUrl}/v1/history/export?instance_id=${id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    let read = 0;
    while (read < 1_000_000) {
      const chunk = await reader.read();
      if (chunk.done) break;
      read += chunk.value.length;
    }
    await stack.client().GET('/revoke_token', { params: { query: { token_id: tokenIdOf(token) } } });
    await sleep(1_200);
    let after = 0;
    let tail = '';
    for (let chunk = await reader.read(); !chunk.done && after < 30_000_000; chunk = await reader.read()) {
      after += chunk.value.length;
      tail = (tail + Buffer.from(chunk.value).toString('utf8')).slice(-400);
    }
    const last = JSON.parse(tail.trimEnd().split('\n').pop()!) as { code?: string; next_cursor?: number | null };
    expect([last.code, typeof last.next_cursor]).toEqual(['token_revoked', 'number']);
    expect(read + after).toBeLessThan(12_000_000);
  }, 60_000);

  it("cannot revoke another account's token, nor undo its revocation, and refuses a malformed token id with 400", async () => {
    const token = stack.token('acme');
    await stack.client({ account: 'mallory' }).GET('/revoke_token', { params: { query: { token_id: tokenIdOf(token) } } });
    await sleep(200);
    expect((await stack.client({ token }).GET('/list_instances')).response.status).toBe(200);
    // Revoked by its account, then "revoked" again by another one (the id is readable in the token): still revoked.
    await stack.client().GET('/revoke_token', { params: { query: { token_id: tokenIdOf(token) } } });
    await stack.client({ account: 'mallory' }).GET('/revoke_token', { params: { query: { token_id: tokenIdOf(token) } } });
    await sleep(200);
    for (const base of [stack.baseUrl, `http://127.0.0.1:${second.port}`]) {
      const r = await fetch(`${base}/v1/list_instances`, { headers: { authorization: `Bearer ${token}` } });
      expect([base, r.status]).toEqual([base, 401]);
    }
    const bad = await stack.client().GET('/revoke_token', { params: { query: { token_id: 'nope' } } });
    expect([bad.response.status, bad.error?.code]).toEqual([400, 'invalid_request']);
  });
});
