import { startStack, type TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

/** The media SSRF guard as it ships (MEDIA_ALLOW_PRIVATE_NETWORKS off): private addresses are refused with a 400. */
describe('send: media URLs on private networks', () => {
  let stack: TestStack;
  let id: string;
  beforeAll(async () => {
    stack = await startStack({}, true, { allowPrivateNetworks: false });
    id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915112345678`);
    await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
    );
  });
  afterAll(() => stack.close());

  it.each([
    'http://127.0.0.1:8080/a.png',
    'http://10.1.2.3/a.png',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/a.png',
    'http://192.168.0.10/a.pdf',
  ])('refuses %s with 400 media_url_forbidden', async (url) => {
    const r = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=media&media_url=${encodeURIComponent(url)}`);
    expect([r.status, r.body.code]).toEqual([400, 'media_url_forbidden']);
    // Someone trying the gateway with a file server on the same machine learns what lets it through.
    expect(r.body.error).toContain('MEDIA_ALLOW_PRIVATE_NETWORKS=true');
  });

  it('still accepts text sends', async () => {
    const r = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=hi`);
    expect(r.status).toBe(200);
  });
});
