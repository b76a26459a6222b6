import { startStack, type TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

describe('get_paircode over HTTP with the sandbox connector', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const created = async (): Promise<string> => (await stack.call('/v1/create_instance')).body.instance_id as string;

  it('answers an 8-character code for the number, and the instance links (the sandbox phone types it)', async () => {
    const id = await created();
    const answer = await stack.call(`/v1/get_paircode?instance_id=${id}&number=4915112345678`);
    expect(answer.status).toBe(200);
    expect(answer.body.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    expect((await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915112345678`)).status).toBe(200);
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
    );
    expect(status.body).toMatchObject({ state: 'connected', linked_number: '4915112345678' });
    // Like get_qrcode: a connected instance needs no code.
    const again = await stack.call(`/v1/get_paircode?instance_id=${id}&number=4915112345678`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('already_connected');
  });

  it('gives a new code on each request while the instance waits to be linked', async () => {
    const id = await created();
    const first = await stack.call(`/v1/get_paircode?instance_id=${id}&number=4915112345678`);
    const second = await stack.call(`/v1/get_paircode?instance_id=${id}&number=4915112345678`);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.code).not.toBe(second.body.code);
  });

  it('refuses a missing or malformed number with 400, and an unknown instance with 404', async () => {
    const id = await created();
    for (const number of ['', '+4915112345678', '49151', '4915112345678901234', 'abc']) {
      const answer = await stack.call(`/v1/get_paircode?instance_id=${id}&number=${encodeURIComponent(number)}`);
      expect([number, answer.status]).toEqual([number, 400]);
      expect(answer.body.error).toMatch(/number/);
    }
    expect((await stack.call(`/v1/get_paircode?instance_id=${id}`)).status).toBe(400);
    expect((await stack.call('/v1/get_paircode?instance_id=AAAAAAAAAAAAAAAAAAAA&number=4915112345678')).status).toBe(404);
  });
});
