import { Writable } from 'node:stream';
import { createLogger } from '@wagw/lib';
import { startGateway, type RunningGateway } from '../../services/gateway/src/service';
import { replicaGatewayConfig, startStack, type TestStack } from '../harness/stack';

describe('logs', () => {
  let stack: TestStack;
  let gateway: RunningGateway;
  let output = '';
  beforeAll(async () => {
    stack = await startStack();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    gateway = await startGateway(replicaGatewayConfig(stack), createLogger('gateway', 'debug', sink));
  });
  afterAll(async () => {
    await gateway.close();
    await stack.close();
  });

  it('are structured JSON lines that never hold the token, the signing secret or the webhook URL, even at debug level', async () => {
    const token = stack.token();
    const base = `http://127.0.0.1:${gateway.port}/v1`;
    const created = (await fetch(`${base}/create_instance?access_token=${token}`).then((r) => r.json())) as { instance_id: string };
    // One credential per request (a second one is refused): the query's above, the header's here.
    const hook = (await fetch(`${base}/set_webhook?instance_id=${created.instance_id}&enable=true&webhook_url=https%3A%2F%2Fh.example`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((r) => r.json())) as { signing_secret: string };
    expect(hook.signing_secret).toEqual(expect.any(String));
    await new Promise((r) => setTimeout(r, 100));
    const lines = output
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; url?: string });
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(requests[0]!.url).toContain('access_token=[redacted]');
    expect(output).not.toContain(token);
    expect(output).not.toContain(hook.signing_secret);
    // A webhook URL may carry a key; message content must not outlive erase_instance_data in a log line.
    expect(output).not.toContain('h.example');
    expect(requests[1]!.url).toContain('webhook_url=[redacted]');
  });
});
