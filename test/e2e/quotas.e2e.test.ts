import { startStack, type TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

describe('quotas over HTTP (through the generated client)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({}, true, { sendQuotas: { queueMax: 50, dailyCap: 2 } }, { instances: { instanceQuota: 2 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it("refuses an account's instance over its quota with 409 instance_quota_reached, and shows every quota in status", async () => {
    const api = stack.client({ account: 'quota' });
    const first = await api.GET('/create_instance');
    await api.GET('/create_instance');
    const over = await eventually(
      () => api.GET('/create_instance'),
      (r) => r.response.status === 409,
    );
    expect(over.error).toEqual({ error: expect.stringContaining('2 of its 2 instances'), code: 'instance_quota_reached' });
    const status = await api.GET('/status', { params: { query: { instance_id: first.data!.instance_id } } });
    expect(status.data?.quotas).toEqual({
      instances: { used: 2, max: 2 },
      queued_sends: { used: 0, max: 50 },
      sends_today: { used: 0, max: 2 },
    });
  });

  it('counts the sends of the day and refuses the one over the daily cap with 429 daily_send_cap_reached', async () => {
    const api = stack.client({ account: 'sender' });
    const id = (await api.GET('/create_instance')).data!.instance_id;
    await api.GET('/get_qrcode', { params: { query: { instance_id: id } } });
    await api.GET('/sandbox/scan', { params: { query: { instance_id: id, number: '4915112345678' } } });
    await eventually(
      () => api.GET('/status', { params: { query: { instance_id: id } } }),
      (s) => s.data?.state === 'connected',
    );
    const body = { instance_id: id, number: '4917612345678', type: 'text' as const, message: 'hi' };
    expect((await api.POST('/send', { body })).response.status).toBe(200);
    expect((await api.POST('/send', { body })).response.status).toBe(200);
    const status = await eventually(
      () => api.GET('/status', { params: { query: { instance_id: id } } }),
      (s) => s.data?.quotas.sends_today.used === 2,
    );
    expect(status.data?.quotas.sends_today).toEqual({ used: 2, max: 2 });
    const refused = await api.POST('/send', { body });
    expect([refused.response.status, refused.error?.code]).toEqual([429, 'daily_send_cap_reached']);
  });
});
