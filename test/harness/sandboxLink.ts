import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import type { TestStack } from './stack';
import { eventually } from './wait';

/** Links an instance on the sandbox connector over HTTP: get_qrcode, the simulated phone scans, then connected. */
export const linkInSandbox = async (stack: TestStack, id: string, number: string): Promise<void> => {
  const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
  if (qr.status !== 200) throw new Error(`get_qrcode answered ${qr.status}: ${JSON.stringify(qr.body)}`);
  const scan = await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=${number}`);
  if (scan.status !== 200) throw new Error(`sandbox/scan answered ${scan.status}: ${JSON.stringify(scan.body)}`);
  const status = await eventually(
    () => stack.call(`/v1/status?instance_id=${id}`),
    (s) => s.body.state === 'connected',
  );
  if (status.body.state !== 'connected') throw new Error(`instance ${id} not connected after the scan (${String(status.body.state)})`);
};

/** The stack's sandbox platform: what the simulated phones were handed. */
export const sandboxOf = (stack: TestStack): SandboxPlatform => {
  if (!stack.sessions.sandbox) throw new Error('the test stack runs the sandbox connector');
  return stack.sessions.sandbox;
};

/** A new instance (of the stack's default account) linked on the sandbox as `number`. */
export const linkedSandboxInstance = async (stack: TestStack, number: string): Promise<string> => {
  const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
  await linkInSandbox(stack, id, number);
  return id;
};
