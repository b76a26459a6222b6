import { startGateway, type RunningGateway } from '../../services/gateway/src/service';
import { startStack, type TestStack } from '../harness/stack';
import { testLogger } from '../harness/logger';
import { sleep } from '../harness/wait';

const WINDOW_MS = 600_000;
const ACCOUNT_MAX = 100;
const ANONYMOUS_MAX = 20;

// Two gateway replicas on one NATS: the account's limit holds for both together.
describe('rate limits over HTTP, two gateway replicas', () => {
  let stack: TestStack;
  let second: RunningGateway;
  const rateLimit = { accountMax: ACCOUNT_MAX, anonymousMax: ANONYMOUS_MAX, windowMs: WINDOW_MS, syncMs: 100 };
  beforeAll(async () => {
    stack = await startStack({}, true, {}, { gateway: { rateLimit } });
    second = await startGateway({ ...stack.gatewayConfig, replicaId: 'test-gateway-2' }, testLogger('gateway-2'));
    // Windows are aligned to the clock: start well inside one, so every request of a test counts in the same window.
    const left = WINDOW_MS - (Date.now() % WINDOW_MS);
    if (left < 30_000) await sleep(left + 100);
  });
  afterAll(async () => {
    await second.close();
    await stack.close();
  });

  const bases = () => [stack.baseUrl, `http://127.0.0.1:${second.port}`];

  /** `total` requests spread over both replicas, `concurrency` at a time; the answers' statuses and the last 429. */
  const hammer = async (path: string, headers: Record<string, string>, total: number, concurrency = 16) => {
    const statuses: number[] = [];
    let limited: { headers: Headers; body: unknown } | undefined;
    let next = 0;
    const worker = async () => {
      while (next < total) {
        const i = next++;
        const response = await fetch(`${bases()[i % 2]}${path}`, { headers });
        statuses.push(response.status);
        const body: unknown = await response.json();
        if (response.status === 429) limited = { headers: response.headers, body };
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { statuses, limited };
  };

  it('holds an account to its limit across both replicas (within 10 %), then answers 429 with Retry-After, RateLimit-* and the JSON error', async () => {
    const token = stack.token('limited');
    const { statuses, limited } = await hammer('/v1/list_instances', { authorization: `Bearer ${token}` }, 3 * ACCOUNT_MAX, 50);
    const admitted = statuses.filter((s) => s === 200).length;
    // The measurement the README quotes.
    process.stdout.write(`rate limit ${ACCOUNT_MAX}/window over 2 replicas: ${admitted} of ${statuses.length} admitted\n`);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admitted).toBeGreaterThanOrEqual(ACCOUNT_MAX);
    expect(admitted).toBeLessThanOrEqual(ACCOUNT_MAX * 1.1);
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited!.headers.get('ratelimit-limit')).toBe(String(ACCOUNT_MAX));
    expect(limited!.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited!.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(limited!.body).toEqual({ error: expect.stringContaining('this account'), code: 'rate_limited' });
    // Another account is not affected.
    const other = await fetch(`${bases()[1]}/v1/list_instances`, { headers: { authorization: `Bearer ${stack.token('unaffected')}` } });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe(String(ACCOUNT_MAX - 1));
  });

  it('limits requests without a valid credential per client address: 401 until the limit, then 429', async () => {
    const { statuses } = await hammer('/v1/list_instances', { authorization: 'Bearer not-a-token' }, 3 * ANONYMOUS_MAX, 4);
    const refused = statuses.filter((s) => s === 401).length;
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(refused).toBeGreaterThanOrEqual(ANONYMOUS_MAX);
    expect(refused).toBeLessThanOrEqual(ANONYMOUS_MAX * 1.1);
    const body = (await (await fetch(`${stack.baseUrl}/v1/status?instance_id=0123456789ABCDEF0123`)).json()) as { code: string };
    expect(body.code).toBe('rate_limited');
  });
});
