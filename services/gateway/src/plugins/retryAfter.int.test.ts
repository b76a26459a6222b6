import { AppError, concurrentUpdate, ExpectedVersionConflictError, issueToken } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { WindowCounter } from '../rateLimit/windowCounter';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// A 429 or 503 tells the client when to retry (Retry-After, RFC 9110 §10.2.3), whichever service refused: the wait
// the service knows, else 1 s for a 429 and 2 s for a 503. Only the gateway's own limiter said it before.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';
/** The limiter's clock: 30 s before its window of a minute ends (windows end at multiples of the window). */
const NOW = 60_000 * 16_666_667 - 30_000;

describe('Retry-After on the answers a client should retry', () => {
  let gateway: FastifyInstance;
  let base: string;
  /** What the fake sessions service fails the next send with. */
  let refusal: AppError = new AppError('internal', 'internal', 'unset');

  beforeAll(async () => {
    const sessions = {
      send: async () => {
        throw refusal;
      },
      ready: async () => true,
      close: () => undefined,
    };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions,
      rateLimit: {
        counter: new WindowCounter({ replicaId: 'r1', syncMs: 60_000, now: () => NOW }),
        settings: { accountMax: 5, anonymousMax: 0, windowMs: 60_000 },
      },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;
  });
  afterAll(() => gateway.close());

  /** A send as `account` (each test its own, so the limiter's count of one does not reach another). */
  const send = async (account: string) => {
    const r = await fetch(`${base}/v1/send?instance_id=${INSTANCE}&number=4915112345678&type=text&message=hi`, {
      headers: { authorization: `Bearer ${issueToken(SECRET, account, 600)}` },
    });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), code: ((await r.json()) as { code: string }).code };
  };

  it.each([
    [
      'a 429 whose wait the service knows (daily cap: until UTC midnight)',
      new AppError('rate_limited', 'daily_send_cap_reached', 'cap', { retryAfterS: 3_600 }),
      429,
      '3600',
    ],
    ['a 429 whose wait it does not (a full send queue): 1 s', new AppError('rate_limited', 'send_queue_full', 'queue full'), 429, '1'],
    ['a 503 (NATS down): 2 s', new AppError('unavailable', 'event_store_unavailable', 'NATS is unreachable'), 503, '2'],
    ['a 503 with a wait of its own, in whole seconds', new AppError('unavailable', 'service_restarting', 'restarting', { retryAfterS: 4.2 }), 503, '5'],
    ['a 503 concurrent_update (a version conflict past the retries): 1 s', concurrentUpdate(new ExpectedVersionConflictError('I.instance', 3)), 503, '1'],
  ])('answers %s with Retry-After', async (_case, error, status, retryAfter) => {
    refusal = error;
    expect(await send(`acct-${error.code}`)).toEqual({ status, retryAfter, code: error.code });
  });

  it('sends no Retry-After with an error a retry does not mend', async () => {
    refusal = new AppError('conflict', 'not_linked', 'scan a QR code first', { retryAfterS: 9 });
    expect(await send('acct-conflict')).toEqual({ status: 409, retryAfter: null, code: 'not_linked' });
  });

  it("keeps the gateway limiter's own wait: the rest of its window", async () => {
    refusal = new AppError('conflict', 'not_linked', 'scan a QR code first');
    for (let i = 0; i < 5; i++) await send('acct-limited');
    const limited = await send('acct-limited');
    expect(limited).toEqual({ status: 429, retryAfter: '30', code: 'rate_limited' });
  });
});
