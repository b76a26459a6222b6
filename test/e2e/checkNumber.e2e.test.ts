import { startStack, type TestStack } from '../harness/stack';
import { linkInSandbox } from '../harness/sandboxLink';

describe('check_number over HTTP with the sandbox connector', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // A small allowance, so the throttle shows within a test.
    stack = await startStack({}, true, { numberChecks: { burst: 8, perMinute: 6 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  const linked = async (number: string): Promise<string> => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, number);
    return id;
  };

  it('answers whether each number is on the platform, with its id (numbers starting 000 are not, in the sandbox)', async () => {
    const id = await linked('4915100000101');
    const one = await stack.call(`/v1/check_number?instance_id=${id}&number=4917612345678`);
    expect(one.status).toBe(200);
    expect(one.body.numbers).toEqual([{ number: '4917612345678', exists: true, jid: '4917612345678@s.whatsapp.net' }]);
    const many = await stack.call(`/v1/check_number?instance_id=${id}&numbers=4917612345678,0001234567`);
    expect(many.body.numbers).toEqual([
      { number: '4917612345678', exists: true, jid: '4917612345678@s.whatsapp.net' },
      { number: '0001234567', exists: false, jid: null },
    ]);
  });

  it('throttles each instance: beyond its allowance 429 with the wait, other instances unaffected', async () => {
    const id = await linked('4915100000102');
    const five = Array.from({ length: 5 }, (_, i) => `491761234560${i}`).join(',');
    expect((await stack.call(`/v1/check_number?instance_id=${id}&numbers=${five}`)).status).toBe(200);
    const refused = await stack.call(`/v1/check_number?instance_id=${id}&numbers=${five}`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'number_checks_throttled', error: expect.stringMatching(/try again in \d+ s/) });
    const other = await linked('4915100000103');
    expect((await stack.call(`/v1/check_number?instance_id=${other}&numbers=${five}`)).status).toBe(200);
  });

  it('refuses bad input with 400, an instance not connected with 409, and an unknown one with 404', async () => {
    const id = await linked('4915100000104');
    const fiftyOne = Array.from({ length: 51 }, (_, i) => `4917600000${String(i).padStart(3, '0')}`).join(',');
    const cases: Array<[string, string]> = [
      ['', 'invalid_numbers'],
      ['&number=4917612345678&numbers=4917612345678', 'invalid_numbers'],
      // number and numbers follow one rule and answer one code (README: invalid_number).
      ['&number=+4917612345678', 'invalid_number'],
      ['&number=123', 'invalid_number'],
      ['&number=', 'invalid_number'],
      ['&numbers=123', 'invalid_number'],
      ['&numbers=4917612345678,12', 'invalid_number'],
      ['&numbers=4917612345678,,4917612345679', 'invalid_number'],
      [`&numbers=${fiftyOne}`, 'too_many_numbers'],
      // Full-length numbers with a space after each comma: over 800 characters, still told how many a check takes.
      [`&numbers=${encodeURIComponent(Array.from({ length: 51 }, (_, i) => `49176${String(i).padStart(10, '0')}`).join(', '))}`, 'too_many_numbers'],
    ];
    for (const [query, code] of cases) {
      const answer = await stack.call(`/v1/check_number?instance_id=${id}${query}`);
      expect([query, answer.status]).toEqual([query, 400]);
      expect(answer.body.error).toMatch(/number/);
      expect([query, answer.body.code]).toEqual([query, code]);
    }
    const fresh = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const notConnected = await stack.call(`/v1/check_number?instance_id=${fresh}&number=4917612345678`);
    expect(notConnected.status).toBe(409);
    expect(notConnected.body.code).toBe('not_connected');
    expect((await stack.call('/v1/check_number?instance_id=AAAAAAAAAAAAAAAAAAAA&number=4917612345678')).status).toBe(404);
  });
});
