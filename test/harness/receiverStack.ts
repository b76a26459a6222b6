import { startStack, type TestStack } from './stack';
import { WebhookReceiver } from './webhookReceiver';

/** A test stack and a webhook receiver for the tests of one describe block: started before them, stopped after. */
export const stackWithReceiver = (...options: Parameters<typeof startStack>): { stack: TestStack; receiver: WebhookReceiver } => {
  const context = { receiver: new WebhookReceiver() } as { stack: TestStack; receiver: WebhookReceiver };
  beforeAll(async () => {
    await context.receiver.start();
    context.stack = await startStack(...options);
  });
  afterAll(async () => {
    await context.stack.close();
    await context.receiver.stop();
  });
  return context;
};
