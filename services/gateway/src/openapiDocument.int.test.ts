import { HISTORY_EVENT_TYPES, issueToken, SEND_CONTENT_LIMITS, TOKEN_SCOPES, WEBHOOK_EVENT_TYPE_NAMES, type TokenScope } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { WindowCounter } from './rateLimit/windowCounter';
import { gatewayWithFakes } from '../../../test/harness/gatewayWithFakes';

// The OpenAPI document (/v1/openapi.json) against what the server really answers: content types, statuses, headers
// and examples. Clients are generated from it (@wagw/client), so a status or content type it leaves out or gets wrong
// is a client that cannot read the answer.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';
const MESSAGE = 'in_5b0e3c9a1f2d4e6f8a7b9c0d';

interface Header {
  schema?: { type?: string; example?: string };
}
interface Response {
  description: string;
  headers?: Record<string, Header>;
  content?: Record<string, { schema?: { type?: string; format?: string }; example?: { error?: string; code?: string } }>;
}
interface FieldSchema {
  maxLength?: number;
  description?: string;
}
interface Operation {
  operationId: string;
  tags?: string[];
  description?: string;
  parameters?: { name: string; schema: FieldSchema; description?: string }[];
  requestBody?: { content: Record<string, { schema: { properties: Record<string, FieldSchema> } }> };
  responses: Record<string, Response>;
}
interface CallOptions {
  headers?: Record<string, string>;
  input?: Record<string, string>;
  query?: string;
  payload?: string;
}
interface Document {
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
}

describe('the OpenAPI document tells what the server answers', () => {
  let gateway: FastifyInstance;
  let doc: Document;
  const auth = (account = 'acme') => ({ authorization: `Bearer ${issueToken(SECRET, account, 600)}` });
  // Every request of the per-operation checks from its own account: the rate limit (3 per account) stays out of them.
  let accounts = 0;
  const accountToken = () => auth(`op${++accounts}`);
  const instanceToken = (scopes: readonly TokenScope[]) => ({
    authorization: `Bearer ${issueToken(SECRET, `op${++accounts}`, 600, { instanceId: INSTANCE, scopes })}`,
  });

  beforeAll(async () => {
    const instances = {
      ready: async () => true,
      close: () => undefined,
      get: async (_account: string, instanceId: string) => ({ instanceId }),
      exportHistory: () =>
        (async function* () {
          yield { ndjson: Buffer.from('{"sequence":1}\n'), nextSequence: '0' };
        })(),
    };
    const sessions = {
      ready: async () => true,
      close: () => undefined,
      streamMedia: () =>
        (async function* () {
          yield { mimetype: 'application/pdf', filename: 'a.pdf', size: 3 };
          yield { data: Buffer.from('pdf') };
        })(),
    };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      instances,
      sessions,
      sandbox: true,
      rateLimit: {
        counter: new WindowCounter({ replicaId: 'r1', syncMs: 60_000 }),
        settings: { accountMax: 3, anonymousMax: 0, windowMs: 60_000 },
      },
    });
    doc = (await gateway.inject('/v1/openapi.json')).json<Document>();
  });
  afterAll(() => gateway.close());

  const operations = (): [string, string, Operation][] =>
    Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]): [string, string, Operation] => [path, method, op]));
  const errorStatuses = (op: Operation) => Object.keys(op.responses).filter((s) => s !== '200');

  it('documents GET /media as the file it is: any type, binary, with Content-Disposition', async () => {
    const ok = doc.paths['/media']!.get!.responses['200']!;
    expect(Object.keys(ok.content ?? {})).toEqual(['*/*']);
    expect(ok.content!['*/*']!.schema).toMatchObject({ type: 'string', format: 'binary' });
    expect(Object.keys(ok.headers ?? {})).toContain('Content-Disposition');
    const r = await gateway.inject({ url: `/v1/media?instance_id=${INSTANCE}&message_id=${MESSAGE}`, headers: auth('media') });
    expect([r.statusCode, r.headers['content-type'], r.body]).toEqual([200, 'application/pdf', 'pdf']);
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="a.pdf"/);
  });

  it('documents GET /history/export as application/x-ndjson text', async () => {
    const ok = doc.paths['/history/export']!.get!.responses['200']!;
    expect(Object.keys(ok.content ?? {})).toEqual(['application/x-ndjson']);
    expect(ok.content!['application/x-ndjson']!.schema).toMatchObject({ type: 'string' });
    const r = await gateway.inject({ url: `/v1/history/export?instance_id=${INSTANCE}`, headers: auth('export') });
    expect([r.statusCode, r.headers['content-type']]).toEqual([200, 'application/x-ndjson; charset=utf-8']);
  });

  it('documents GET /events as text/event-stream for its 200 only: its errors are JSON', async () => {
    const { responses } = doc.paths['/events']!.get!;
    expect(Object.keys(responses['200']!.content ?? {})).toEqual(['text/event-stream']);
    for (const status of errorStatuses(doc.paths['/events']!.get!))
      expect([status, Object.keys(responses[status]!.content ?? {})]).toEqual([status, ['application/json']]);
    const r = await gateway.inject('/v1/events');
    expect([r.statusCode, r.headers['content-type']]).toEqual([401, 'application/json; charset=utf-8']);
  });

  it('documents 405 (with Allow) everywhere, 415 on every JSON body, 414 on every GET, as the server answers them', async () => {
    for (const [path, method, op] of operations()) {
      const statuses = Object.keys(op.responses);
      expect([path, method, statuses.includes('405'), op.responses['405']?.headers?.Allow !== undefined]).toEqual([path, method, true, true]);
      expect([path, method, statuses.includes('415')]).toEqual([path, method, op.requestBody !== undefined]);
      if (method === 'get') expect([path, statuses.includes('414')]).toEqual([path, true]);
      expect([path, method, statuses.includes('431')]).toEqual([path, method, true]);
    }
    expect(doc.paths['/send']!.get!.responses['414']!.description).toMatch(/8 KiB/);
    const { get, post } = doc.paths['/send']!;
    const example = (status: string) => (post!.responses[status] ?? get!.responses[status])!.content!['application/json']!.example;
    const notAllowed = await gateway.inject({ method: 'DELETE', url: '/v1/send' });
    expect([notAllowed.statusCode, notAllowed.headers.allow, notAllowed.json<{ code: string }>().code]).toEqual([405, 'GET, POST', 'method_not_allowed']);
    expect(notAllowed.json()).toEqual(example('405'));
    const xml = await gateway.inject({ method: 'POST', url: '/v1/send', headers: { ...auth('xml'), 'content-type': 'application/xml' }, payload: '<send/>' });
    expect([xml.statusCode, xml.json<{ code: string }>().code]).toEqual([415, 'unsupported_media_type']);
    expect(xml.json()).toEqual(example('415'));
    // JSON sent as text/plain (a client that forgot its Content-Type) is refused the same way, not read as a string.
    const plain = await gateway.inject({
      method: 'POST',
      url: '/v1/send',
      headers: { ...auth('plain'), 'content-type': 'text/plain' },
      payload: '{"number":"1"}',
    });
    expect([plain.statusCode, plain.json<{ code: string }>().code]).toEqual([415, 'unsupported_media_type']);
    const long = await gateway.inject({ url: `/v1/send?instance_id=${INSTANCE}&message=${'x'.repeat(9_000)}`, headers: auth('long') });
    expect([long.statusCode, long.json<{ code: string }>().code]).toEqual([414, 'url_too_long']);
    expect(long.json()).toEqual(example('414'));
  });

  it("shows on each operation the 400, 401, 403, 404, 405, 413, 414 and 415 it answers, in the server's words", async () => {
    const OTHER = '0000000000000000000A';
    /** The operation called as a client would: its method on its path, the input in its query (GET) or JSON body (POST). */
    const call = (path: string, method: string, { headers = {}, input = {}, query = '', payload }: CallOptions = {}) => {
      const search = new URLSearchParams(method === 'get' ? input : {}).toString();
      const url = `/v1${path}?${[search, query].filter(Boolean).join('&')}`;
      const body = payload ?? (method === 'post' ? JSON.stringify(input) : undefined);
      const type = body === undefined ? {} : { 'content-type': 'application/json' };
      return gateway.inject({ method: method.toUpperCase() as 'GET' | 'POST', url, headers: { ...type, ...headers }, payload: body });
    };
    const answers = async (...calls: ReturnType<typeof call>[]) => (await Promise.all(calls)).map((r) => [r.statusCode, r.json<unknown>()]);
    for (const [path, method, op] of operations()) {
      const example = (status: string) => op.responses[status]?.content?.['application/json']?.example;
      const answered = async (status: string, ...calls: ReturnType<typeof call>[]) =>
        expect([op.operationId, status, await answers(...calls)]).toEqual([
          op.operationId,
          status,
          expect.arrayContaining([[Number(status), example(status)]]),
        ]);
      // Called with nothing, or with a query that is not UTF-8 (every route refuses it): one of them is the example.
      await answered('400', call(path, method, { headers: accountToken() }), call(path, method, { headers: accountToken(), query: '%ff' }));
      await answered('401', call(path, method, { headers: { authorization: 'Bearer not-a-token' } }));
      // An instance token with each single scope: what the operation refuses it is the example (an account operation refuses all).
      await answered('403', ...TOKEN_SCOPES.map((scope) => call(path, method, { headers: instanceToken([scope]) })));
      // An instance token naming another instance: refused as an unknown one.
      if (op.responses['404']) await answered('404', call(path, method, { headers: instanceToken(TOKEN_SCOPES), input: { instance_id: OTHER } }));
      const notAllowed = await gateway.inject({ method: 'DELETE', url: `/v1${path}`, headers: accountToken() });
      expect([op.operationId, notAllowed.statusCode, notAllowed.json()]).toEqual([op.operationId, 405, example('405')]);
      expect([op.operationId, notAllowed.headers.allow]).toEqual([op.operationId, op.responses['405']!.headers!.Allow!.schema!.example]);
      const tooLarge = call(path, method, { headers: accountToken(), payload: 'x'.repeat(64 * 1024 + 1) });
      if (example('413')?.code === 'request_too_large') await answered('413', tooLarge);
      else
        expect([op.operationId, op.responses['413']!.description, (await tooLarge).statusCode]).toEqual([
          op.operationId,
          expect.stringContaining('`request_too_large`'),
          413,
        ]);
      if (op.responses['414']) await answered('414', call(path, method, { headers: accountToken(), query: `message=${'x'.repeat(9_000)}` }));
      if (op.responses['415'])
        await answered('415', call(path, method, { headers: { ...accountToken(), 'content-type': 'application/xml' }, payload: '<x/>' }));
    }
  });

  it('documents Retry-After on 429 and 503, RateLimit-* on 200 and 429: the headers the server sends', async () => {
    for (const [path, method, op] of operations()) {
      const headersOf = (status: string) => Object.keys(op.responses[status]?.headers ?? {});
      expect([path, method, headersOf('429')]).toEqual([
        path,
        method,
        expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      ]);
      expect([path, method, headersOf('503')]).toEqual([path, method, expect.arrayContaining(['Retry-After'])]);
      // Any command can lose a race for its instance more often than the services retry (plugins/errors.ts: 503).
      expect([path, method, op.responses['503']?.description]).toEqual([path, method, expect.stringContaining('`concurrent_update`')]);
      expect([path, method, headersOf('200')]).toEqual([path, method, expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])]);
    }
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(await gateway.inject({ url: `/v1/media?instance_id=${INSTANCE}&message_id=${MESSAGE}`, headers: auth('limited') }));
    const [ok, limited] = [answers[0]!, answers[3]!];
    for (const r of [ok, limited])
      expect(Object.keys(r.headers)).toEqual(expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']));
    expect([limited.statusCode, limited.json<{ code: string }>().code, limited.headers['retry-after']]).toEqual([429, 'rate_limited', expect.any(String)]);
  });

  it("states the vCard's real limit: 8192 bytes, and in the query form the 8 KiB URL that holds it", async () => {
    for (const path of ['/send', '/send_group']) {
      const { get, post } = doc.paths[path]!;
      const inBody = post!.requestBody!.content['application/json']!.schema.properties.vcard!;
      const inQuery = get!.parameters!.find((p) => p.name === 'vcard')!;
      expect([path, inBody.maxLength, inQuery.schema.maxLength]).toEqual([path, SEND_CONTENT_LIMITS.vcardBytes, SEND_CONTENT_LIMITS.vcardBytes]);
      expect([path, inQuery.description]).toEqual([path, expect.stringMatching(/8 KiB.*414 url_too_long/)]);
    }
    // Over the cap in characters too: still its own code, not the schema's invalid_request.
    const vcard = `BEGIN:VCARD\nNOTE:${'x'.repeat(9_000)}\nEND:VCARD`;
    const r = await gateway.inject({
      method: 'POST',
      url: '/v1/send',
      headers: auth('vcard'),
      payload: { instance_id: INSTANCE, number: '4915112345678', type: 'contact', vcard },
    });
    expect([r.statusCode, r.json<{ code: string }>().code]).toEqual([400, 'vcard_too_large']);
    const anonymous = await gateway.inject({ method: 'POST', url: '/v1/send', payload: { instance_id: INSTANCE, type: 'contact', vcard } });
    expect(anonymous.statusCode).toBe(401);
  });

  it('lists every webhook event type in /events and declares every tag the operations use', () => {
    const description = doc.paths['/events']!.get!.description!;
    for (const type of WEBHOOK_EVENT_TYPE_NAMES) expect([type, description.includes(type)]).toEqual([type, true]);
    const declared = doc.tags.map((t) => t.name);
    for (const [, , op] of operations()) for (const tag of op.tags ?? []) expect(declared).toContain(tag);
  });

  it("names the types each `types` filter takes: the log's on history, the webhook's on events and replay_webhooks", () => {
    const typesOf = (path: string): string => {
      const parameter = doc.paths[path]!.get!.parameters!.find((p) => p.name === 'types')!;
      return parameter.description ?? parameter.schema.description ?? '';
    };
    for (const type of HISTORY_EVENT_TYPES) expect([type, typesOf('/history').includes(type)]).toEqual([type, true]);
    expect(typesOf('/history')).not.toContain('message.received');
    for (const path of ['/events', '/replay_webhooks']) {
      for (const type of WEBHOOK_EVENT_TYPE_NAMES) expect([path, type, typesOf(path).includes(type)]).toEqual([path, type, true]);
      expect(typesOf(path)).not.toContain('MessageReceived');
    }
  });

  it('shows for each error status an example with a code the server answers with that status', () => {
    // Codes the server sends with each status (the shared example must be one of them, not instance_not_found for all).
    const codes: Record<string, string[]> = {
      '400': ['invalid_request', 'invalid_json'],
      '401': ['missing_token', 'invalid_token', 'token_expired', 'token_revoked'],
      '403': ['insufficient_scope', 'account_token_required'],
      '404': ['instance_not_found'],
      '405': ['method_not_allowed'],
      '413': ['request_too_large', 'media_too_large'],
      '414': ['url_too_long'],
      '415': ['unsupported_media_type', 'unsupported_content_encoding'],
      '429': ['rate_limited'],
      '431': ['headers_too_large'],
      '503': ['event_store_unavailable', 'service_unavailable'],
    };
    for (const [path, method, op] of operations()) {
      // 409s differ by operation: the next test.
      for (const status of errorStatuses(op).filter((s) => s !== '409')) {
        const example = op.responses[status]!.content?.['application/json']?.example;
        expect([path, method, status, codes[status]?.includes(example?.code ?? '')]).toEqual([path, method, status, true]);
      }
    }
  });

  it('shows on each operation that answers 409 the codes it answers there, its example one of them', () => {
    // What each operation really answers with 409 (the services' conflict() calls it reaches), not one shared example.
    const send = ['not_linked', 'instance_logged_out_on_phone', 'idempotency_key_reused'];
    const qr = ['already_connected', 'already_linked'];
    const conflicts: Record<string, string[]> = {
      createInstance: ['instance_quota_reached'],
      sendMessage: send,
      sendMessageQuery: send,
      sendGroupMessage: send,
      sendGroupMessageQuery: send,
      listGroups: ['not_connected'],
      markRead: ['not_connected'],
      markReadQuery: ['not_connected'],
      checkNumbers: ['not_connected'],
      getQrCode: qr,
      getPairingCode: qr,
      reconnect: ['not_linked'],
      replayWebhooks: ['webhook_disabled'],
      redeliverWebhooks: ['delivery_not_failed', 'delivery_changed', 'webhook_disabled'],
      sandboxScan: ['no_qr_waiting', 'sandbox_only'],
      sandboxInbound: ['not_connected', 'sandbox_only'],
      sandboxRestrict: ['sandbox_only'],
    };
    const answering = operations().filter(([, , op]) => op.responses['409'] !== undefined);
    expect(answering.map(([, , op]) => op.operationId).sort()).toEqual(Object.keys(conflicts).sort());
    for (const [, , op] of answering) {
      const codes = conflicts[op.operationId]!;
      const conflict = op.responses['409']!;
      expect([op.operationId, codes.includes(conflict.content!['application/json']!.example!.code!)]).toEqual([op.operationId, true]);
      for (const code of codes) expect([op.operationId, code, conflict.description.includes(`\`${code}\``)]).toEqual([op.operationId, code, true]);
    }
  });
});
