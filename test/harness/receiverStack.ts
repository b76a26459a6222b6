import { startStack, type TestStack } from './stack';
import { WebhookReceiver } from './webhookReceiver';

export interface ReceiverStack {
  stack: TestStack;
  receiver: WebhookReceiver;
}

/** The whole stack and a webhook receiver on 127.0.0.1 for the tests of the calling describe block (set in beforeAll). */
export const useReceiverStack = (): ReceiverStack => {
  const env = {} as ReceiverStack;
  beforeAll(async () => {
    env.receiver = new WebhookReceiver();
    await env.receiver.start();
    env.stack = await startStack();
  });
  afterAll(async () => {
    await env.stack?.close();
    await env.receiver?.stop();
  });
  return env;
};
